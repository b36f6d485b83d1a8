/**
 * `rootsctl check` and `explain` say when mcp-roots-proxy would ask the person rather than
 * refuse (the policy's `ask:`), against the daemon and offline, and only for the refusals the
 * proxy asks about: outside every root, and a write in a read-only root under `{write: true}`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { rootsctl } from '../helpers/cli.js';
import { shortDir, startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';

const ASKED = /^asked first: mcp-roots-proxy puts this to the person/m;

/** A policy whose server `fs` has one read-only root `ro` and a denied `ro/secret`. */
function policy(dir: string, ask: string): string {
  return [
    'version: 1',
    ...(ask === '' ? [] : [`ask: ${ask}`]),
    `deny: [${join(dir, 'out', 'secret')}]`,
    'servers:',
    '  fs:',
    '    roots:',
    `      - path: ${join(dir, 'ro')}`,
    '        readOnly: true',
    '  other:',
    '    ask: false',
    '    roots: []',
    '',
  ].join('\n');
}

function tree(): string {
  const dir = shortDir();
  for (const d of ['ro', 'out', 'out/secret']) mkdirSync(join(dir, d));
  return dir;
}

/** check and explain under each `ask:`, with `ctl` running rootsctl on that policy. */
async function checkAll(
  t: Test,
  dir: string,
  setPolicy: (ask: string) => Promise<void>,
  ctl: (...argv: string[]) => Promise<{ code: number; out: string; err: string }>,
): Promise<void> {
  const outside = join(dir, 'out', 'x');
  const denied = join(dir, 'out', 'secret');
  const readOnly = join(dir, 'ro');

  await setPolicy('true');
  let r = await ctl('check', 'fs', outside);
  t.equal(r.code, 1, 'ask: true: still a refusal (exit 1)');
  t.match(r.out, /^denied: read: .* outside every root/);
  t.match(r.out, ASKED, 'ask: true: a path outside every root is asked about');
  t.notMatch((await ctl('check', 'fs', denied)).out, ASKED, 'a denied path is never asked about');
  t.notMatch(
    (await ctl('check', 'fs', readOnly, '--write')).out,
    ASKED,
    'ask: true: a write in a read-only root is refused without a question',
  );
  t.notMatch((await ctl('check', 'other', outside)).out, ASKED, 'a block with ask: false wins');
  t.same(
    Object.keys(JSON.parse((await ctl('check', 'fs', outside, '--json')).out) as object).sort(),
    ['access', 'allowed', 'canonical', 'reason', 'refusal'],
    '--json stays the protocol object',
  );
  let e = await ctl('explain', 'fs');
  t.match(e.out, /^Asks the person \(.*\) about a path outside every root\.$/m);
  t.notMatch(e.out, 'read-only root.', 'explain names only what is asked about');
  t.notMatch((await ctl('explain', 'other')).out, 'Asks the person');

  await setPolicy('{write: true}');
  r = await ctl('check', 'fs', readOnly, '--write');
  t.match(r.out, /^denied: write: .* read-only root/);
  t.match(r.out, ASKED, 'ask: {write: true}: a write in a read-only root is asked about');
  e = await ctl('explain', 'fs');
  t.match(e.out, /about a path outside every root and about a write in a read-only root\.$/m);

  await setPolicy('');
  t.notMatch((await ctl('check', 'fs', outside)).out, ASKED, 'no ask: nothing is asked');
  t.notMatch((await ctl('explain', 'fs')).out, 'Asks the person');
}

void t.test('offline: check and explain say what the proxy asks about', async (t) => {
  const dir = tree();
  const config = join(dir, 'p.yaml');
  const env = { HOME: join(dir, 'home'), XDG_STATE_HOME: join(dir, 'state') };
  await checkAll(
    t,
    dir,
    (ask) => Promise.resolve(writeFileSync(config, policy(dir, ask))),
    (...argv) => rootsctl([...argv, '--config', config], { env }),
  );
});

void t.test('against the daemon: check and explain say what the proxy asks about', async (t) => {
  const dir = tree();
  const config = join(dir, 'p.yaml');
  writeFileSync(config, policy(dir, 'false'));
  const d = await startDaemon(t, undefined, { dir, configFile: config });
  const env = { HOME: join(dir, 'home') };
  const ctl = (...argv: string[]) => rootsctl(['--socket', d.socket, ...argv], { env });
  await checkAll(
    t,
    dir,
    async (ask) => {
      writeFileSync(config, policy(dir, ask));
      // The daemon has the edit once explain reports the new rule.
      const want =
        ask === ''
          ? undefined
          : ask === 'true'
            ? { outside: true, write: false }
            : { outside: true, write: true };
      await waitFor(
        async () => {
          const got = (JSON.parse((await ctl('explain', 'fs', '--json')).out) as { ask?: object })
            .ask;
          return (
            JSON.stringify(got ?? { outside: false, write: false }) ===
            JSON.stringify(want ?? { outside: false, write: false })
          );
        },
        30_000,
        `the daemon to load ask: ${ask || '(none)'}`,
      );
    },
    ctl,
  );
});
