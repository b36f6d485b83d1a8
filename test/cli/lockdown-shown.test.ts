/**
 * Every command that shows roots says when lockdown is on and how to lift it: list, check,
 * explain, grants, watch and status against the daemon (a note on stderr beside --json, which
 * stays the protocol's object), and list, check and explain of a policy evaluated offline, whose
 * roots no server gets while the daemon's state says lockdown.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { main } from '../../cli/run.js';
import { rootsctl } from '../helpers/cli.js';
import { shortDir, startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';

void t.test('lockdown is named wherever roots are shown', async (t) => {
  const dir = shortDir();
  const w = join(dir, 'w');
  mkdirSync(w);
  const config = join(dir, 'p.yaml');
  const d = await startDaemon(t, undefined, { dir, configFile: config });
  writeFileSync(config, `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${w}\n`);
  const env = { HOME: join(dir, 'home') };
  const ctl = (...argv: string[]) => rootsctl(['--socket', d.socket, ...argv], { env });
  await waitFor(async () => (await ctl('list', 'fs')).out.includes(w), 30_000, 'the policy');
  t.notMatch((await ctl('list', 'fs')).out, 'LOCKDOWN', 'nothing said before lockdown');
  t.equal((await ctl('lockdown')).code, 0);
  const unlock = `\`rootsctl --socket ${d.socket} unlock\``;
  const line = `LOCKDOWN: mcp-rootsd gives every server no roots and refuses every access; ${unlock} ends it.\n`;

  const CASES: [string[], number][] = [
    [['list', 'fs'], 0],
    [['check', 'fs', w], 1],
    [['explain', 'fs'], 0],
    [['grants'], 0],
    [['status'], 0],
  ];
  for (const [argv, code] of CASES) {
    const r = await ctl(...argv);
    t.equal(r.code, code, `${argv.join(' ')}: exit ${code}`);
    t.equal(
      r.out.slice(0, line.length),
      line,
      `${argv.join(' ')} starts by saying lockdown is on and how to end it`,
    );
    if (argv[0] !== 'status') {
      const j = await ctl(...argv, '--json');
      t.doesNotThrow((): unknown => JSON.parse(j.out), `${argv.join(' ')} --json is still JSON`);
      t.equal(j.err, `rootsctl: ${line}`, `${argv.join(' ')} --json: the note on stderr`);
    }
  }
  t.match((await ctl('list', 'fs')).out, 'fs has no roots.');
  t.match((await ctl('explain', 'fs')).out, /root\s+\S+\s+\S+/, 'explain still shows the rule');

  await t.test('watch says it at the start and when lockdown comes again', async (t) => {
    let out = '';
    let stop!: () => void;
    const stopped = new Promise<void>((r) => (stop = r));
    const running = main(['--socket', d.socket, 'watch', 'fs'], {
      out: (s) => (out += s),
      err: () => {},
      env,
      cwd: process.cwd(),
      isTTY: false,
      interrupted: () => stopped,
    });
    const notes = () => out.split(line).length - 1;
    await waitFor(() => notes() === 1, 30_000, 'the first list, in lockdown');
    await ctl('unlock');
    await waitFor(() => out.includes(w), 30_000, 'the list after unlock');
    t.equal(notes(), 1, 'no note with roots');
    await ctl('lockdown');
    await waitFor(() => notes() === 2, 30_000, 'the note with the next empty list');
    stop();
    t.equal(await running, 0);
  });

  await t.test('offline: the policy answers, and the daemon state is named', async (t) => {
    const state = join(dir, 'state');
    for (const argv of [
      ['list', 'fs'],
      ['check', 'fs', w],
      ['explain', 'fs'],
    ]) {
      const r = await rootsctl([...argv, '--config', config, '--state-dir', state], { env });
      t.equal(r.code, 0, argv.join(' '));
      t.match(
        r.out,
        `LOCKDOWN (${join(state, 'lockdown')}): mcp-rootsd gives every server no roots; what follows is what this policy gives once \`rootsctl unlock\` ends it.\n`,
        `${argv.join(' ')} --config`,
      );
    }
    await ctl('unlock');
    const r = await rootsctl(['list', 'fs', '--config', config, '--state-dir', state], { env });
    t.notMatch(r.out, 'LOCKDOWN', 'nothing once unlocked');
  });
});
