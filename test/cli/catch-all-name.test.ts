/**
 * `list` and `explain` of a name only the policy's `'*'` covers: the answer is `'*'`'s (exit 0),
 * and a note on stderr says so, with a "did you mean", since a typo gets the same answer. A name
 * the policy gives (even `name: {}`) or a pattern narrower than `'*'` covers gets no note; offline
 * (`--config`) and against the daemon alike.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { rootsctl } from '../helpers/cli.js';
import { shortDir, startDaemon } from '../helpers/daemon.js';

void t.test("names only '*' covers", async (t) => {
  const dir = shortDir();
  const w = join(dir, 'w');
  const shared = join(dir, 'shared');
  mkdirSync(w);
  mkdirSync(shared);
  const policy = [
    'version: 1',
    'servers:',
    '  filesystem:',
    `    roots: [{path: ${w}}]`,
    '  left-to-star: {}',
    "  'work-*':",
    '    readOnly: true',
    "  '*':",
    `    roots: [{path: ${shared}}]`,
    '',
  ].join('\n');
  const config = join(dir, 'p.yaml');
  writeFileSync(config, policy);
  const d = await startDaemon(t, undefined, { dir, configFile: config });
  const env = { HOME: join(dir, 'home') };
  const where: [string, string[]][] = [
    ['daemon', ['--socket', d.socket]],
    ['offline', ['--config', config, '--state-dir', join(dir, 'offline-state')]],
  ];
  for (const [label, how] of where) {
    for (const command of ['list', 'explain']) {
      const typo = await rootsctl([command, 'filesytem', ...how], { env });
      t.equal(typo.code, 0, `${label} ${command}: '*' answers, exit 0`);
      t.match(typo.out, shared, `${label} ${command}: '*''s root`);
      t.equal(
        typo.err,
        `rootsctl: No entry of the policy names "filesytem": it gets only what the '*' entry gives every server, as a typo would. Did you mean "filesystem"? Servers in the policy: filesystem, left-to-star. If "filesytem" is meant to have only the rules of '*', name it in the policy (\`filesytem: {}\` under \`servers:\`).\n`,
        `${label} ${command}: the note`,
      );
      for (const meant of ['filesystem', 'left-to-star', 'work-x']) {
        const r = await rootsctl([command, meant, ...how], { env });
        t.equal(r.code, 0, `${label} ${command} ${meant}`);
        t.equal(r.err, '', `${label} ${command} ${meant}: no note`);
      }
    }
  }
});
