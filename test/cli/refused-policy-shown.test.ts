/**
 * While the policy on disk is refused (an edit with an error), the daemon keeps serving the last
 * valid policy. list, check and explain say so, with the command that shows the errors: someone
 * who has just edited the file otherwise took the old roots for the edit's.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { rootsctl } from '../helpers/cli.js';
import { shortDir, startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';

void t.test('a refused policy on disk is named wherever roots are shown', async (t) => {
  const dir = shortDir();
  const w = join(dir, 'w');
  mkdirSync(w);
  const config = join(dir, 'p.yaml');
  const d = await startDaemon(t, undefined, { dir, configFile: config });
  const valid = `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${w}\n`;
  writeFileSync(config, valid);
  const env = { HOME: join(dir, 'home') };
  const ctl = (...argv: string[]) => rootsctl(['--socket', d.socket, ...argv], { env });
  await waitFor(async () => (await ctl('list', 'fs')).out.includes(w), 30_000, 'the policy');
  t.notMatch((await ctl('list', 'fs')).out, 'NOTE', 'nothing said while the policy is valid');

  writeFileSync(config, `${valid}        readonly: true\n`);
  t.equal((await ctl('reload')).code, 1, 'the edit is refused');
  const line = `NOTE: the policy on disk has 1 error, so mcp-rootsd keeps serving the last valid policy, which this answer is from; \`rootsctl --socket ${d.socket} status\` shows it.\n`;
  for (const [argv, code] of [
    [['list', 'fs'], 0],
    [['check', 'fs', w], 0],
    [['explain', 'fs'], 0],
  ] as const) {
    const r = await ctl(...argv);
    t.equal(r.code, code, `${argv.join(' ')}: exit ${code}`);
    t.equal(r.out.slice(0, line.length), line, `${argv.join(' ')} starts with the note`);
    const j = await ctl(...argv, '--json');
    t.doesNotThrow((): unknown => JSON.parse(j.out), `${argv.join(' ')} --json is still JSON`);
    t.equal(j.err, `rootsctl: ${line}`, `${argv.join(' ')} --json: the note on stderr`);
  }
  t.match((await ctl('list', 'fs')).out, w, 'the last valid policy still serves');

  writeFileSync(config, valid);
  t.equal((await ctl('reload')).code, 0, 'fixed');
  t.notMatch((await ctl('list', 'fs')).out, 'NOTE', 'nothing said once it is fixed');
});

void t.test('a grants file with an error is named too, as granting nothing', async (t) => {
  const dir = shortDir();
  const w = join(dir, 'w');
  mkdirSync(w);
  const d = await startDaemon(t, `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${w}\n`, {
    dir,
  });
  const env = { HOME: join(dir, 'home') };
  const ctl = (...argv: string[]) => rootsctl(['--socket', d.socket, ...argv], { env });
  writeFileSync(join(d.stateDir, 'grants.yaml'), 'version: 1\nservers: [oops\n');
  t.equal((await ctl('reload')).code, 1, 'the grants file is refused');
  const r = await ctl('list', 'fs');
  t.equal(
    r.out.split('\n')[0],
    `NOTE: the grants file has 1 error, so none of its grants serve; \`rootsctl --socket ${d.socket} status\` shows it.`,
  );
  t.notMatch(r.out, 'last valid policy', 'the policy itself is fine');
  t.match(
    (await ctl('status')).out,
    '(no grants serve until the grants file is fixed or moved away)',
  );
});
