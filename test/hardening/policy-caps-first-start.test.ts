/**
 * A policy past one of the caps on what it may read (policies/policy-caps.ts) at the daemon's
 * first start: the load stops reading, so a deny in a file it did not read would be lost if the
 * rest were served. Each row puts the deny where the cap stops the read (the last of a glob's
 * matches, the end of a chain of includes, after one file included many times, after files too
 * large together); the daemon must serve no root at all, refuse the denied path, and say why.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { MAX_POLICY_FILES } from '../../policies/index.js';

const CAP = /one policy may (read|hold) at most/;

/** [what, lay out the files in `dir` and return the main file's include lines] */
const ROWS: [string, (dir: string, deny: string) => string[]][] = [
  [
    'a glob matching more files than the cap, the deny in the last',
    (dir, deny) => {
      mkdirSync(join(dir, 'g'));
      for (let i = 0; i < MAX_POLICY_FILES + 5; i++)
        writeFileSync(join(dir, 'g', `${String(i).padStart(4, '0')}.yaml`), 'version: 1\n');
      writeFileSync(join(dir, 'g', 'zz.yaml'), `version: 1\ndeny: [${deny}]\n`);
      return ['g/*.yaml'];
    },
  ],
  [
    'a chain of includes longer than the cap, the deny at its end',
    (dir, deny) => {
      mkdirSync(join(dir, 'c'));
      const n = MAX_POLICY_FILES + 5;
      for (let i = 0; i < n; i++)
        writeFileSync(join(dir, 'c', `${i}.yaml`), `version: 1\ninclude: [${i + 1}.yaml]\n`);
      writeFileSync(join(dir, 'c', `${n}.yaml`), `version: 1\ndeny: [${deny}]\n`);
      return ['c/0.yaml'];
    },
  ],
  [
    'one file included more times than the cap, the deny after',
    (dir, deny) => {
      writeFileSync(join(dir, 'same.yaml'), 'version: 1\n');
      writeFileSync(join(dir, 'deny.yaml'), `version: 1\ndeny: [${deny}]\n`);
      return [...Array<string>(MAX_POLICY_FILES + 5).fill('same.yaml'), 'deny.yaml'];
    },
  ],
  [
    'files too large together, the deny after them',
    (dir, deny) => {
      mkdirSync(join(dir, 'b'));
      const pad = `version: 1\n# ${'x'.repeat(1_000_000)}\n`;
      for (let i = 0; i < 9; i++) writeFileSync(join(dir, 'b', `${i}.yaml`), pad);
      writeFileSync(join(dir, 'b', '9.yaml'), `version: 1\ndeny: [${deny}]\n`);
      return ['b/*.yaml'];
    },
  ],
];

for (const [what, layout] of ROWS) {
  void t.test(`first start past a cap: ${what}`, async (t) => {
    const dir = ownedShortDir(t);
    const secret = join(dir, 'w', 'secret');
    mkdirSync(secret, { recursive: true });
    mkdirSync(join(dir, 'home'));
    const includes = layout(dir, secret);
    const policy = [
      'version: 1',
      'include:',
      ...includes.map((i) => `  - ${i}`),
      'servers:',
      '  fs:',
      `    roots: [{path: ${join(dir, 'w')}}]`,
      '',
    ].join('\n');
    const d = await startDaemon(t, policy, { dir });
    const c = await d.connect();
    const errors = (await c.status()).policy.errors;
    t.ok(
      errors.some((e) => CAP.test(e.message)),
      'the cap is reported',
    );
    t.same((await c.listRoots('fs')).roots, [], 'no root is served');
    t.equal((await c.check('fs', secret)).allowed, false, 'the denied path is refused');
    t.equal((await c.check('fs', join(dir, 'w'))).allowed, false, 'so is the root');
  });
}
