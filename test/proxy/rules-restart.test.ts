/**
 * An edit of a server's `launch` or `sandbox` alone (its roots unchanged) restarts it when, and
 * only when, what it is started with changes: extra read paths, the network, its arguments, its
 * environment. An edit that changes none of these (a tool rule, an extra path that does not exist)
 * restarts nothing, and another server sharing the file is not restarted at all.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, startProxied, type Proxied } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

const count = (h: Proxied, text: string): number => h.stderr().split(text).length - 1;
const RESTART = 'restarting the server:';
const NO_RESTART = 'but not what it is started with: no restart';
const TOOLS_ONLY = "the policy's rules for h changed: tools";

interface Rules {
  args?: string;
  env?: string;
  sandbox?: string;
  tools?: string;
}

void t.test('launch and sandbox edits restart only what they change', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'r'), { recursive: true });
  mkdirSync(join(w, 'extra'), { recursive: true });
  writeFileSync(join(w, 'extra', 'x.txt'), 'extra');
  const launch = (args: string) =>
    `    launch:\n      command: ${JSON.stringify(process.execPath)}\n      args: [${JSON.stringify(HOSTILE_SERVER)}, ${args}]\n`;
  const policy = (h: Rules) =>
    `version: 1\nservers:\n  h:\n${launch(h.args ?? '"--mode=a"')}` +
    `      env: {MCP_TEST_X: "${h.env ?? '1'}"}\n` +
    `    sandbox: ${h.sandbox ?? 'true'}\n${h.tools ?? ''}    roots:\n      - path: ${w}/r\n` +
    `  other:\n${launch('"--mode=other"')}    sandbox: true\n    roots:\n      - path: ${w}/r\n`;
  const d = await startDaemon(t, policy({}), { dir });
  const start = (server: string) =>
    startProxied(t, { server, socket: d.socket, proxyArgs: ['--no-enforce'] });
  const [h, other] = await Promise.all([start('h'), start('other')]);
  const read = (ref: string) => h.call('attempt', { action: 'read', ref });
  const launched = async () =>
    JSON.parse((await h.call('launch')).text) as { argv: string[]; env: Record<string, string> };

  t.match((await read(`${w}/extra/x.txt`)).text, /^ENOENT: /, 'not mounted at first');
  t.same((await launched()).argv, ['--mode=a']);

  const extra = `{read: [${w}/extra]}`;
  // [what, the server's rules now, restarts, the reason's pattern, what the new server shows];
  // the steps that restart nothing wait for the proxy's word that it looked.
  const steps: [string, Rules, boolean | string, RegExp | undefined, () => Promise<unknown>][] = [
    [
      'an extra read path',
      { sandbox: extra },
      true,
      /its sandbox \(\+--ro-bind \S*\/extra \S*\/extra\)/,
      async () => t.match((await read(`${w}/extra/x.txt`)).text, /^ok: extra$/),
    ],
    [
      'no network',
      { sandbox: `{read: [${w}/extra], network: false}` },
      true,
      /its sandbox \(\+--unshare-net\)/,
      async () => t.match((await read(`${w}/extra/x.txt`)).text, /^ok: extra$/),
    ],
    [
      'its arguments',
      { sandbox: `{read: [${w}/extra], network: false}`, args: '"--mode=b"' },
      true,
      /its command line/,
      async () => t.same((await launched()).argv, ['--mode=b']),
    ],
    [
      'its environment',
      { sandbox: `{read: [${w}/extra], network: false}`, args: '"--mode=b"', env: '2' },
      true,
      /its environment \(MCP_TEST_X\)/,
      async () => t.same((await launched()).env, { MCP_TEST_X: '2' }),
    ],
    [
      'a tool rule',
      {
        sandbox: `{read: [${w}/extra], network: false}`,
        args: '"--mode=b"',
        env: '2',
        tools: '    tools:\n      launch: {readOnly: true}\n',
      },
      TOOLS_ONLY,
      undefined,
      async () => t.same((await launched()).argv, ['--mode=b']),
    ],
    [
      'an extra path that does not exist',
      {
        sandbox: `{read: [${w}/extra, ${w}/missing], network: false}`,
        args: '"--mode=b"',
        env: '2',
      },
      NO_RESTART,
      undefined,
      async () => t.match((await read(`${w}/extra/x.txt`)).text, /^ok: extra$/),
    ],
  ];
  let restarts = 0;
  for (const [what, rules, restarts_, reason, check] of steps) {
    const quiet = typeof restarts_ === 'string' ? count(h, restarts_) : 0;
    d.writePolicy(policy(rules));
    if (restarts_ === true) {
      restarts++;
      await waitFor(() => count(h, RESTART) >= restarts, 30_000, `restart: ${what}`);
      const line = h.stderr().split(RESTART)[restarts]!.split('\n')[0]!;
      t.match(line, /what it is started with changed \(the policy’s launch or sandbox\)/, what);
      t.match(line, reason!, `${what}: the reason names it`);
    } else {
      const word = restarts_ as string;
      await waitFor(() => count(h, word) > quiet, 30_000, `no restart: ${what}`);
    }
    await check();
    t.equal(count(h, RESTART), restarts, `${what}: ${restarts} restart(s) so far`);
  }
  t.equal(count(other, RESTART), 0, 'the other server never restarted');
  t.notMatch(other.stderr(), /the policy's rules for other changed/, 'nor told of the edits');
});
