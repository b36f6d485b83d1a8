import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parseSpec, resolveNpx } from '../../proxy/npx.js';
import { minimal, programPaths } from '../../proxy/program.js';
import { decidingAncestors } from '../../proxy/sandbox-mounts.js';
import { GATE_FDS, gateCommand } from '../../proxy/sandbox-gate.js';
import { bwrapArgs, sandboxEnv, type SandboxMounts } from '../../proxy/sandbox.js';

const MOUNTS: SandboxMounts = {
  system: [
    { path: '/usr', kind: 'dir' },
    { path: '/bin', kind: 'symlink', target: 'usr/bin' },
  ],
  procReadOnly: ['/proc/sys', '/proc/sysrq-trigger'],
  read: ['/opt/tool'],
  roots: [
    { path: '/w/rw', readOnly: false },
    { path: '/w/ro', readOnly: true },
  ],
  write: ['/w/cache'],
  program: ['/w/rw/node_modules'],
  programCheck: { shown: [], given: [] },
  hidden: [
    { path: '/w/rw/secret', dir: true },
    { path: '/w/rw/.env', dir: false },
  ],
  readOnly: ['/w/rw/.mcp.json'],
  pinned: [],
  network: true,
  disableUserns: true,
};

/** The index of the mount of `path` by `op` (the first argument after the flag). */
function at(args: string[], op: string, path: string): number {
  const i = args.findIndex((a, k) => a === op && args[k + 1] === path);
  if (i === -1) throw new Error(`${op} ${path} is missing`);
  return i;
}

void t.test('the bwrap command line: the walls and their order', (t) => {
  const a = bwrapArgs(MOUNTS, {
    command: '/usr/bin/node',
    args: ['s.js', '--x'],
    env: [],
    cwd: '/w/rw',
  });
  for (const flag of ['--unshare-user', '--unshare-pid', '--die-with-parent', '--new-session']) {
    t.ok(a.includes(flag), flag);
  }
  t.ok(a.includes('--disable-userns'));
  t.notOk(a.includes('--unshare-net'), 'the network is kept by default');
  t.ok(
    bwrapArgs({ ...MOUNTS, network: false }, { command: 'x', args: [], env: [] }).includes(
      '--unshare-net',
    ),
  );
  t.equal(a[a.indexOf('--cap-drop') + 1], 'ALL');
  t.equal(at(a, '--tmpfs', '/'), a.indexOf('--tmpfs'), 'an empty root comes first');
  t.ok(at(a, '--symlink', 'usr/bin') > 0, 'a merged-/usr link stays a link');
  t.ok(at(a, '--tmpfs', '/tmp') > at(a, '--ro-bind', '/usr'), 'a private /tmp');
  // Broad to specific: roots over the system, the program over a writable root, denies last.
  t.ok(at(a, '--bind', '/w/rw') > at(a, '--ro-bind', '/opt/tool'));
  t.ok(at(a, '--ro-bind', '/w/ro') > at(a, '--tmpfs', '/tmp'));
  t.ok(at(a, '--ro-bind', '/w/rw/node_modules') > at(a, '--bind', '/w/rw'));
  t.ok(at(a, '--bind', '/w/cache') > at(a, '--ro-bind', '/w/ro'));
  const last = Math.max(
    at(a, '--bind', '/w/rw'),
    at(a, '--ro-bind', '/w/rw/node_modules'),
    at(a, '--bind', '/w/cache'),
  );
  t.ok(at(a, '--ro-bind', '/w/rw/.mcp.json') > last, 'protected after every bind');
  t.ok(at(a, '--tmpfs', '/w/rw/secret') > last, 'a denied directory after every bind');
  t.equal(a[at(a, '--tmpfs', '/w/rw/secret') + 2], '--remount-ro');
  t.equal(a[a.indexOf('/w/rw/.env') - 1], '/dev/null', 'a denied file is /dev/null');
  const end = a.indexOf('--');
  t.same(a.slice(end - 2, end), ['--chdir', '/w/rw']);
  t.same(a.slice(end + 1), gateCommand('/usr/bin/node', ['s.js', '--x']), 'through the gate');
  t.same(a.slice(-3), ['/usr/bin/node', 's.js', '--x'], 'the server’s own command line last');
  // The filter and the init's pid, on the descriptors the gate's start hands them.
  t.equal(a[a.indexOf('--seccomp') + 1], String(GATE_FDS.filter));
  t.equal(a[a.indexOf('--info-fd') + 1], String(GATE_FDS.info));
  for (const mem of ['/proc/1/mem', '/proc/1/task/1/mem']) {
    t.ok(at(a, '--ro-bind', '/dev/null') < a.indexOf(mem), `${mem}: masked`);
    t.ok(a.indexOf(mem) > at(a, '--proc', '/proc'), `${mem}: after /proc is mounted`);
  }
  // The kernel's settings, which real root could write from inside: read-only over the new /proc.
  for (const p of ['/proc/sys', '/proc/sysrq-trigger']) {
    t.ok(at(a, '--ro-bind', p) > at(a, '--proc', '/proc'), `${p}: read-only after /proc`);
    t.equal(a[at(a, '--ro-bind', p) + 2], p, `${p}: onto itself`);
  }
  t.end();
});

void t.test('directories above a mount in a writable root are pinned before it', (t) => {
  const m: SandboxMounts = {
    ...MOUNTS,
    roots: [
      { path: '/w/rw', readOnly: false },
      { path: '/w/rw/app/vendor', readOnly: true },
      { path: '/w/ro', readOnly: true },
    ],
    hidden: [{ path: '/w/rw/proj/secrets', dir: true }],
    pinned: [
      '/w/rw/proj',
      '/w/rw',
      '/w',
      '/w/rw/app',
      '/w/ro/sub',
      '/w/rw/app/vendor/x',
      '/w/cache/a',
      '/w/rw/proj',
    ],
  };
  const a = bwrapArgs(m, { command: 'x', args: [], env: [] });
  const rw = at(a, '--bind', '/w/rw');
  t.equal(at(a, '--bind', '/w/rw/app'), rw + 3, 'right after the writable root');
  t.equal(at(a, '--bind', '/w/rw/proj'), rw + 6, 'in path order');
  t.ok(
    at(a, '--ro-bind', '/w/rw/app/vendor') > at(a, '--bind', '/w/rw/app'),
    'before the nested root',
  );
  t.ok(at(a, '--tmpfs', '/w/rw/proj/secrets') > at(a, '--bind', '/w/rw/proj'), 'before the deny');
  t.equal(at(a, '--bind', '/w/cache/a'), at(a, '--bind', '/w/cache') + 3, 'after a write path');
  t.equal(a.filter((x) => x === '/w/rw/proj').length, 2, 'once');
  for (const p of ['/w', '/w/ro/sub', '/w/rw/app/vendor/x']) {
    t.notOk(a.includes(p), `${p}: no pin (outside, or under a read-only mount)`);
  }
  t.equal(a.filter((x) => x === '/w/rw').length, 2, 'the root is bound once');
  t.end();
});

void t.test('which ancestors decide a deny', (t) => {
  const access = 'all' as const;
  t.equal(decidingAncestors({ uri: 'file:///w/a/b', access }), Infinity, 'a literal path: all');
  t.equal(decidingAncestors({ pattern: '/w/*/secrets', access }), Infinity, 'an absolute glob');
  t.equal(decidingAncestors({ pattern: '**/.env', access }), 0, '**/NAME: none');
  t.equal(decidingAncestors({ pattern: '**/.git/config', access }), 1, 'the .git above');
  t.equal(decidingAncestors({ pattern: '**/a/*/c.pem', access }), 2);
  t.equal(decidingAncestors({ pattern: '**/a/**/c', access }), Infinity, 'a ** inside');
  t.equal(decidingAncestors({ pattern: '**/{a/b,c}', access }), Infinity, 'braces');
  t.end();
});

void t.test('the environment loses every socket and agent', (t) => {
  const env = sandboxEnv({
    PATH: '/usr/bin',
    HOME: '/home/u',
    SSH_AUTH_SOCK: '/run/user/1/ssh',
    DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1/bus',
    DBUS_SYSTEM_BUS_ADDRESS: 'unix:path=/run/dbus/system_bus_socket',
    XDG_RUNTIME_DIR: '/run/user/1',
    MCP_ROOTS_SOCKET: '/run/user/1/mcp-roots/rootsd.sock',
    GPG_AGENT_INFO: 'x',
    DISPLAY: ':0',
    WAYLAND_DISPLAY: 'wayland-0',
    KEEP: 'yes',
  });
  t.same(env, { PATH: '/usr/bin', HOME: '/home/u', KEEP: 'yes' });
  t.end();
});

void t.test('minimal paths and npx package specs', (t) => {
  t.same(minimal(['/a/b', '/a', '/ab', '/a/b/c', '/ab']), ['/a', '/ab']);
  t.same(parseSpec('@scope/pkg@1.2.3'), { name: '@scope/pkg', version: '1.2.3' });
  t.same(parseSpec('@scope/pkg'), { name: '@scope/pkg', version: undefined });
  t.same(parseSpec('pkg@latest'), { name: 'pkg', version: 'latest' });
  t.same(parseSpec('pkg'), { name: 'pkg', version: undefined });
  t.end();
});

void t.test('a program is found through PATH, its interpreter and its package', async (t) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mr-prog-')));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const home = join(dir, 'home');
  // A package installed under a prefix, its bin a link, its dependency beside it.
  const pkg = join(dir, 'prefix/lib/node_modules/srv');
  mkdirSync(join(pkg, 'dist'), { recursive: true });
  mkdirSync(join(dir, 'prefix/bin'));
  mkdirSync(home);
  writeFileSync(join(pkg, 'package.json'), '{"name":"srv","version":"2.0.0","bin":"dist/cli.js"}');
  writeFileSync(join(pkg, 'dist/cli.js'), '#!/usr/bin/env node\n');
  chmodSync(join(pkg, 'dist/cli.js'), 0o755);
  const { symlinkSync } = await import('node:fs');
  symlinkSync(join(pkg, 'dist/cli.js'), join(dir, 'prefix/bin/srv'));
  const ctx = { env: { PATH: `${dir}/prefix/bin:/usr/bin` }, cwd: dir, home };
  const paths = await programPaths('srv', ['--flag'], ctx);
  t.ok(paths.includes(join(dir, 'prefix/lib/node_modules')), 'its node_modules');
  t.ok(
    paths.some((p) => p.endsWith('/node') || p === '/usr'),
    `its interpreter: ${paths.join(' ')}`,
  );
  t.notOk(
    paths.some((p) => p === home || p === dir),
    'never the home or a directory above the package',
  );

  // npx: the newest cached copy (or the asked version) becomes `node BIN`.
  const cache = join(dir, 'npm');
  for (const [hash, version] of [
    ['aaa', '1.0.0'],
    ['bbb', '1.10.0'],
  ] as const) {
    const p = join(cache, '_npx', hash, 'node_modules', '@x/srv');
    mkdirSync(p, { recursive: true });
    writeFileSync(join(p, 'package.json'), JSON.stringify({ version, bin: { srv: 'cli.js' } }));
    // The bin must be there: one that leads to no file inside its package is refused.
    writeFileSync(join(p, 'cli.js'), '');
  }
  const npxCtx = { env: { PATH: '/usr/bin', npm_config_cache: cache }, cwd: dir, home };
  const launch = (args: string[]) => ({ command: 'npx', args, env: [] });
  t.match(await resolveNpx(launch(['-y', '@x/srv', 'a']), npxCtx), {
    launch: { args: [join(cache, '_npx/bbb/node_modules/@x/srv/cli.js'), 'a'] },
  });
  t.match(await resolveNpx(launch(['@x/srv@1.0.0']), npxCtx), {
    launch: { args: [join(cache, '_npx/aaa/node_modules/@x/srv/cli.js')] },
  });
  t.match(await resolveNpx(launch(['-y', 'other']), npxCtx), {
    problem: /no package of that name is in npx's cache.*\(cd ~ && npx -y -p other true\)/,
  });
  // `--package PKG COMMAND` is understood (sandbox-npx.test.ts); `--call` is not.
  t.match(await resolveNpx(launch(['--package', 'x', 'y']), npxCtx), {
    problem: /^x is not in npx's cache/,
  });
  t.match(await resolveNpx(launch(['--call', 'x']), npxCtx), {
    problem: /understands only npx/,
  });
  t.same(await resolveNpx({ command: 'node', args: ['s'], env: [] }, npxCtx), {
    launch: { command: 'node', args: ['s'], env: [] },
  });
});

void t.test(
  'a read-only root or read path equal to a write path is bound read-only after it',
  (t) => {
    const a = bwrapArgs(
      {
        ...MOUNTS,
        read: ['/w/same-read'],
        roots: [{ path: '/w/same-root', readOnly: true }],
        write: ['/w/same-read', '/w/same-root'],
        program: [],
      },
      { command: 'x', args: [], env: [] },
    );
    for (const p of ['/w/same-read', '/w/same-root']) {
      const ro = a.lastIndexOf(p) - 2; // --ro-bind SRC DEST
      t.equal(a[ro], '--ro-bind', `${p}: its last mount is read-only`);
      t.ok(ro > at(a, '--bind', p), `${p}: after the writable bind`);
    }
    t.end();
  },
);
