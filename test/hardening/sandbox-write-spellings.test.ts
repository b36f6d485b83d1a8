/**
 * `sandbox.write` paths spelled otherwise than the include's directory: through a link, with a
 * trailing slash, with `..`. Each must still keep the include directory read-only in the sandbox
 * (or the server not start): a sandboxed server that can write a policy file there grants itself
 * any root.
 *
 * (Attacks that held when written: every row passes.)
 *
 * Real daemon, real proxy under bubblewrap, the hostile fixture server.
 */
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, startProxied } from '../helpers/proxied-server.js';
import { ownedShortDir } from '../helpers/proxy.js';

const policy = (r: string, x: string, include: string) =>
  `version: 1\ninclude: ["${include}"]\nservers:\n  h:\n    roots:\n      - path: ${r}\n        readOnly: true\n    sandbox:\n      write: ["${x}"]\n`;

const INC = (_: string, x: string) => `${x}/policy.d/*.yaml`;

/** [what, the sandbox.write path, the include pattern, the file written, under x] */
const SPELLINGS: [
  string,
  (dir: string, x: string) => string,
  (dir: string, x: string) => string,
  string?,
][] = [
  ['through a link to it', (dir) => join(dir, 'lnk'), INC],
  ['with a trailing slash', (_, x) => `${x}/`, INC],
  ['with a .. segment', (dir) => `${dir}/r/../x`, INC],
  ['a link to its parent, then the name', (dir) => `${join(dir, 'plink')}/x`, INC],
  ['holding an include spelled through a link', (_, x) => x, (dir) => `${dir}/lnk/policy.d/*.yaml`],
  ['holding an include spelled with ..', (_, x) => x, (dir) => `${dir}/r/../x/policy.d/*.yaml`],
  ['holding an include spelled with //', (_, x) => x, (_, x) => `${x}//policy.d/*.yaml`],
  ['holding an include of a brace', (_, x) => x, (_, x) => `${x}/{policy.d,other}/*.yaml`],
  ['holding an include with ** below it', (_, x) => x, (_, x) => `${x}/**/zz.yaml`, 'new/zz.yaml'],
  ['holding an include with *.d below it', (_, x) => x, (_, x) => `${x}/*.d/*.yaml`, 'n.d/zz.yaml'],
];

for (const [what, spell, include, target = 'policy.d/zz.yaml'] of SPELLINGS) {
  void t.test(`a sandbox.write path ${what}`, async (t) => {
    const dir = ownedShortDir(t);
    const r = join(dir, 'r');
    const x = join(dir, 'x');
    const incDir = join(x, 'policy.d');
    mkdirSync(r, { recursive: true });
    mkdirSync(incDir, { recursive: true });
    writeFileSync(join(incDir, 'a.yaml'), 'version: 1\n');
    symlinkSync(x, join(dir, 'lnk'));
    symlinkSync(dir, join(dir, 'plink'));
    const d = await startDaemon(t, policy(r, spell(dir, x), include(dir, x)), { dir });
    let boxed;
    try {
      boxed = await startProxied(t, {
        server: 'h',
        socket: d.socket,
        proxyArgs: ['--sandbox', '--no-enforce'],
        command: [process.execPath, HOSTILE_SERVER],
      });
    } catch (err) {
      t.pass(`not started: ${(err as Error).message.slice(0, 200)}`);
      return;
    }
    const mk = await boxed.call('attempt', { action: 'mkdir', ref: join(x, target, '..'), to: '' });
    t.comment(`mkdir: ${mk.text}`);
    const added = await boxed.call('attempt', { action: 'write', ref: join(x, target), to: '' });
    t.notMatch(added.text, /^ok/, `no new file in the include directory: ${added.text}`);
    t.notOk(existsSync(join(x, target)), 'and none made');
  });
}
