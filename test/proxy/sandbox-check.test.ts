/** Whether a sandbox's mounts are the planned ones, from mountinfo texts (sandbox-check.ts). */
import t from 'tap';
import { hostSource, mountProblems, parseMountinfo } from '../../proxy/sandbox-check.js';
import type { SandboxOp } from '../../proxy/sandbox.js';

/** A mountinfo line as the kernel writes it. */
const line = (
  id: number,
  parent: number,
  dev: string,
  root: string,
  at: string,
  opts = 'rw',
  fs = 'ext4',
) => `${id} ${parent} ${dev} ${root} ${at} ${opts},relatime shared:1 - ${fs} /dev/x rw`;

const HOST = [
  line(20, 1, '8:1', '/', '/'),
  line(21, 20, '0:30', '/', '/tmp', 'rw', 'tmpfs'),
  line(22, 20, '8:2', '/srv/data', '/home/me/data'), // a bind mount of another disk
  line(23, 22, '0:31', '/', '/home/me/data', 'rw', 'tmpfs'), // stacked on it
  line(24, 20, '0:6', '/', '/dev', 'rw', 'devtmpfs'),
].join('\n');

void t.test('where a host path lives: the deepest mount, the one on top', (t) => {
  const host = parseMountinfo(HOST);
  t.same(hostSource(host, '/home/me/w'), { device: '8:1', root: '/home/me/w' });
  t.same(hostSource(host, '/tmp/a b'), { device: '0:30', root: '/a b' });
  t.same(hostSource(host, '/tmp'), { device: '0:30', root: '/' });
  t.same(hostSource(host, '/home/me/data/x'), { device: '0:31', root: '/x' }, 'stacked: the top');
  t.same(hostSource(host, '/home/me/database'), { device: '8:1', root: '/home/me/database' });
  t.same(hostSource(host, '/dev/null'), { device: '0:6', root: '/null' });
  t.end();
});

void t.test('paths with escaped and UTF-8 bytes read back as they are', (t) => {
  const text = Buffer.from(
    line(5, 1, '8:1', '/w/a\\040b\\012c\\134d/é', '/w/a\\040b\\012c\\134d/é'),
  );
  const [m] = parseMountinfo(text.toString('latin1'));
  t.equal(m!.root, '/w/a b\nc\\d/é');
  t.equal(m!.at, '/w/a b\nc\\d/é');
  t.equal(parseMountinfo('garbage\n\n1 2 3').length, 0, 'lines that are not mountinfo: none');
  t.end();
});

const bind = (source: string, readOnly: boolean, dest = source): SandboxOp => ({
  op: 'bind',
  source,
  dest,
  readOnly,
});

void t.test('a layout that came out as planned has no problem', (t) => {
  const layout: SandboxOp[] = [
    { op: 'tmpfs', dest: '/', readOnly: false },
    bind('/home/me/w', false),
    bind('/home/me/w/g', false), // a pin
    bind('/home/me/w/g', true), // read-only again, the same path twice
    bind('/dev/null', true, '/home/me/w/.env'),
    { op: 'tmpfs', dest: '/home/me/w/secret', readOnly: true },
  ];
  const sandbox = [
    line(1, 0, '0:40', '/', '/', 'rw', 'tmpfs'),
    line(2, 1, '8:1', '/home/me/w', '/home/me/w'),
    line(3, 2, '8:1', '/home/me/w/g', '/home/me/w/g'),
    line(4, 3, '8:1', '/home/me/w/g', '/home/me/w/g', 'ro'),
    line(5, 2, '0:6', '/null', '/home/me/w/.env', 'ro', 'devtmpfs'),
    line(6, 2, '0:41', '/', '/home/me/w/secret', 'ro', 'tmpfs'),
  ].join('\n');
  t.same(mountProblems(layout, parseMountinfo(sandbox), parseMountinfo(HOST)), []);
  t.end();
});

void t.test('a link followed in the source, in the destination, or read-only lost', (t) => {
  const host = parseMountinfo(HOST);
  const layout = [bind('/home/me/ro', true), bind('/home/me/w/g', false)];
  const problems = (...lines: string[]) =>
    mountProblems(layout, parseMountinfo(lines.join('\n')), host);
  const ro = line(2, 1, '8:1', '/home/me/ro', '/home/me/ro', 'ro');
  // The pin's source was swapped for a link to the read-only root: bound from there.
  t.match(problems(ro, line(3, 1, '8:1', '/home/me/ro', '/home/me/w/g')), [
    /^\/home\/me\/w\/g is not mounted as planned: found \/home\/me\/ro \(8:1\)$/,
  ]);
  // Its destination was: the writable bind landed on the read-only root.
  t.match(problems(ro, line(3, 2, '8:1', '/home/me/w/g', '/home/me/ro')), [
    /^\/home\/me\/w\/g is not mounted as planned: nothing is mounted there$/,
  ]);
  // Both: the read-only root's own entry is there, the pin's second one does not count for it.
  t.match(problems(ro, line(3, 2, '8:1', '/home/me/ro', '/home/me/ro')), [/w\/g is not mounted/]);
  t.match(
    problems(
      line(2, 1, '8:1', '/home/me/ro', '/home/me/ro'),
      line(3, 1, '8:1', '/home/me/w/g', '/home/me/w/g'),
    ),
    [],
  );
  t.match(
    problems(
      line(2, 1, '8:1', '/home/me/ro', '/home/me/ro', 'rw'),
      line(3, 1, '8:1', '/home/me/w/g', '/home/me/w/g'),
    ),
    [/^\/home\/me\/ro \(read-only\) is not mounted as planned: found \/home\/me\/ro \(8:1\)$/],
  );
  t.match(mountProblems([{ op: 'tmpfs', dest: '/home/me/w/s', readOnly: true }], [], host), [
    /\/home\/me\/w\/s \(hidden\) is not an empty read-only directory/,
  ]);
  // The empty root made read-only last: a writable one is a problem.
  const root: SandboxOp[] = [
    { op: 'tmpfs', dest: '/', readOnly: false },
    { op: 'remount-ro', dest: '/' },
  ];
  t.same(
    mountProblems(root, parseMountinfo(line(1, 0, '0:40', '/', '/', 'ro', 'tmpfs')), host),
    [],
  );
  t.match(mountProblems(root, parseMountinfo(line(1, 0, '0:40', '/', '/', 'rw', 'tmpfs')), host), [
    /^\/ is not read-only as planned$/,
  ]);
  t.end();
});
