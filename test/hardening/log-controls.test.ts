/**
 * `rootsctl log` prints what a file holds, and with `--socket` a file a daemon named: the text of
 * an entry is not the daemon's own (a path an agent chose, a reason, a tool's label) or not the
 * daemon's at all. Before, only a path's C0 controls were escaped in the table: a reason, a tool,
 * a root's URI or a policy error reached the terminal raw (ESC sequences, an OSC 52 clipboard
 * write, CR overwriting the row, bidi overrides, C1 controls), `--json` wrote C1 and bidi
 * controls raw, and an entry whose fields had the wrong types stopped the table with a
 * TypeError. Each form (table, `--json`, `--follow`) must escape all of it, `--json` must still
 * read back to the same values, and an entry of the wrong shape is counted, not shown.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { bin } from '../helpers/bin.js';
import { rootsctl } from '../helpers/cli.js';
import { waitFor } from '../helpers/poll.js';
import { shortDir } from '../helpers/short-dir.js';
import { ACTED_ON_RAW } from '../helpers/terminal-controls.js';

const NASTY = [
  '\u001b[2J\u001b[H',
  '\u001b]52;c;ZWNobyBwd25lZA==\u0007',
  'ok\rREFUSED',
  'evil\u202etxt.exe',
  'c1\u009b31m\u009d0;title\u009c',
  'sep\u2028line\u2029para',
  'del\u007f',
  'tab\there',
];

function entries(now: string): object[] {
  return NASTY.flatMap((x) => [
    {
      time: now,
      kind: 'check',
      server: 'fs',
      path: `/h/${x}`,
      access: 'read',
      allowed: false,
      reason: `outside ${x}`,
      tool: `tool${x}`,
      client: `client${x}`,
    },
    {
      time: now,
      kind: 'roots',
      server: 'fs',
      added: [`file:///h/${x}`],
      removed: [],
      changed: [`file:///h/c${x}`],
    },
    {
      time: now,
      kind: 'policy-rejected',
      reason: `edit${x}`,
      files: [`/h/${x}.yaml`],
      errors: [`/h/p.yaml:1:1: ${x}`],
    },
    {
      time: now,
      kind: 'ask',
      server: 'fs',
      path: `/h/${x}`,
      access: 'write',
      answer: 'accept',
      granted: { path: `/h/g${x}`, readOnly: true, expiresAt: now },
    },
  ]);
}

/** Entries whose fields have the wrong types or sizes: each is "not an entry". */
function misshapen(now: string): object[] {
  return [
    { time: now, kind: 'roots', server: 'fs' },
    {
      time: now,
      kind: 'check',
      server: 'fs',
      path: 42,
      access: 'read',
      allowed: false,
      reason: 'r',
    },
    { time: now, kind: 'policy-loaded', reason: 'start', files: '/h/p.yaml' },
    {
      time: now,
      kind: 'ask',
      server: 'fs',
      path: '/h/x',
      access: 'read',
      answer: 'x'.repeat(100_000),
    },
    {
      time: now,
      kind: 'check',
      server: 's'.repeat(300),
      path: '/h/x',
      access: 'read',
      allowed: true,
      reason: 'r',
    },
    {
      time: now,
      kind: 'check',
      server: 'fs\u001b[31m',
      path: '/h/x',
      access: 'read',
      allowed: true,
      reason: 'r',
    },
    { time: now, kind: 'grant-added', server: 'fs', path: '/h/x', expiresAt: { at: 1 } },
    { time: `${now}\u001b[2J`, kind: 'lockdown', on: true },
    { time: now, kind: 'lockdown', on: 'yes' },
  ];
}

function setup() {
  const state = shortDir();
  const file = join(state, 'decisions.jsonl');
  const now = new Date().toISOString();
  const good = entries(now);
  writeFileSync(file, [...good, ...misshapen(now)].map((e) => `${JSON.stringify(e)}\n`).join(''));
  return { env: { HOME: '/h', MCP_ROOTS_STATE_DIR: state }, file, good };
}

void t.test('the table escapes every text of an entry', async (t) => {
  const { env, good } = setup();
  const r = await rootsctl(['log'], { env });
  t.equal(r.code, 0, r.err);
  t.notMatch(r.out, ACTED_ON_RAW, 'nothing a terminal acts on is printed raw');
  t.equal(r.out.trimEnd().split('\n').length, good.length + 1, 'one row per entry, and the header');
  t.match(r.out, /\\u001b\]52;c;/, 'an OSC 52 write is shown escaped');
  t.match(r.out, /ok\\rREFUSED/, 'a CR is shown escaped');
  t.match(r.out, /evil\\u202etxt/, 'a bidi override is shown escaped');
  t.match(r.out, /c1\\u009b31m/, 'a C1 control is shown escaped');
  t.match(r.err, /skipped 9 lines .* that are not entries/, 'each misshapen entry is counted');
  t.notMatch(r.err, ACTED_ON_RAW);
});

void t.test('--json escapes them too, and reads back to the same entries', async (t) => {
  const { env, good } = setup();
  const r = await rootsctl(['log', '--json'], { env });
  t.equal(r.code, 0, r.err);
  t.notMatch(r.out, ACTED_ON_RAW, 'nothing a terminal acts on is printed raw');
  const lines = r.out.trimEnd().split('\n');
  t.same(
    lines.map((l) => JSON.parse(l) as unknown),
    good,
    'the same values as written',
  );
});

void t.test('--follow escapes what it prints', async (t) => {
  const { env, file } = setup();
  const child = spawn(process.execPath, [bin('rootsctl'), 'log', '--follow'], {
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  t.teardown(() => child.kill('SIGKILL'));
  await waitFor(() => out.includes('para'), 10_000, 'the existing entries');
  const later = {
    time: new Date().toISOString(),
    kind: 'check',
    server: 'fs',
    path: '/h/later\u001b]0;pwned\u0007',
    access: 'read',
    allowed: false,
    reason: 'then\u009b2J',
  };
  appendFileSync(file, `${JSON.stringify(later)}\n`);
  await waitFor(() => out.includes('later'), 10_000, 'the appended entry');
  child.kill('SIGINT');
  await new Promise((resolve) => child.on('exit', resolve));
  t.notMatch(out, ACTED_ON_RAW, 'nothing a terminal acts on is printed raw');
  t.match(out, /later\\u001b\]0;pwned\\u0007: then\\u009b2J/);
});
