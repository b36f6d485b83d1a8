/**
 * `rootsctl log`: filters, JSON lines, escaping, --follow across a rotation, and --socket reading
 * the log of the daemon it names.
 */
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { bin } from '../helpers/bin.js';
import { rootsctl } from '../helpers/cli.js';
import { startDaemon } from '../helpers/daemon.js';
import { shortDir } from '../helpers/short-dir.js';
import { waitFor } from '../helpers/proxy.js';

const now = Date.now();
const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();

const ENTRIES = [
  { time: at(180), kind: 'policy-loaded', reason: 'start', files: ['/h/.config/mcp-roots.yaml'] },
  {
    time: at(120),
    kind: 'check',
    server: 'fs',
    path: '/h/work/a.ts',
    access: 'read',
    allowed: true,
    reason: 'inside',
    tool: 'read_text_file',
    client: 'claude-code 2.1',
  },
  {
    time: at(30),
    kind: 'check',
    server: 'fs',
    path: '/h/.ssh/id_ed25519',
    access: 'read',
    allowed: false,
    reason: 'outside every root of fs',
  },
  {
    time: at(20),
    kind: 'check',
    server: 'git',
    path: '/h/evil\n2026-01-01 00:00:00  fs  allowed read',
    access: 'write',
    allowed: false,
    reason: 'outside',
  },
  { time: at(10), kind: 'ask', server: 'fs', path: '/h/dl', access: 'read', answer: 'decline' },
  {
    time: at(5),
    kind: 'grant-added',
    server: 'git',
    path: '/h/repo',
    readOnly: false,
    expiresAt: at(-60),
  },
];

function setup(): { env: Record<string, string>; file: string; state: string } {
  const dir = shortDir();
  const state = join(dir, 'state');
  mkdirSync(state);
  const file = join(state, 'decisions.jsonl');
  writeFileSync(file, ENTRIES.map((e) => JSON.stringify(e) + '\n').join('') + 'not json\n');
  return { env: { HOME: '/h', MCP_ROOTS_STATE_DIR: state }, file, state };
}

void t.test('the table, and what each filter keeps', async (t) => {
  const { env } = setup();
  const all = await rootsctl(['log'], { env });
  t.equal(all.code, 0);
  t.match(all.out, /^TIME\s+SERVER\s+DECISION\s+DETAIL\n/);
  t.match(all.out, /fs\s+allowed read\s+~\/work\/a\.ts \[read_text_file via claude-code 2\.1\]/);
  t.match(all.out, /REFUSED read\s+~\/\.ssh\/id_ed25519: outside every root of fs/);
  t.match(all.out, /asked: decline/);
  // The files a load read: those in force, which a reason such as "grants changed" did not all touch.
  t.match(all.out, /policy loaded\s+start; in force: ~\/\.config\/mcp-roots\.yaml\n/);
  // In local time to the second, as the TIME column: not UTC in one cell and local in the next.
  t.match(all.out, /grant read-write\s+~\/repo until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\n/);
  t.equal(all.out.trimEnd().split('\n').length, ENTRIES.length + 1, 'one line per entry');
  t.match(all.out, /evil\\n2026/, 'a newline in a path is shown escaped, never as a new row');
  t.match(all.err, /skipped 1 line/);

  const refused = await rootsctl(['log', '--refused'], { env });
  t.equal(refused.out.trimEnd().split('\n').length - 1, 3, 'two refused checks and a declined ask');
  t.notMatch(refused.out, /a\.ts/, 'the allowed check is left out');

  const git = await rootsctl(['log', '--server', 'git'], { env });
  t.equal(git.out.trimEnd().split('\n').length - 1, 2);

  const recent = await rootsctl(['log', '--since', '45m'], { env });
  t.equal(recent.out.trimEnd().split('\n').length - 1, 4);
  const sinceIso = await rootsctl(['log', '--since', at(15)], { env });
  t.equal(sinceIso.out.trimEnd().split('\n').length - 1, 2);

  const json = await rootsctl(['log', '--json', '--server', 'fs', '--refused'], { env });
  const lines = json.out
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { kind: string });
  t.same(
    lines.map((l) => l.kind),
    ['check', 'ask'],
  );
});

void t.test('bad options and an empty log say so', async (t) => {
  const { env } = setup();
  const bad = await rootsctl(['log', '--since', 'yesterday'], { env });
  t.equal(bad.code, 2);
  t.match(bad.err, /--since "yesterday" is not a duration/);
  const none = await rootsctl(['log', '--server', 'nobody'], { env });
  t.equal(none.code, 0);
  t.match(none.err, /No decisions match/);
  const empty = await rootsctl(['log'], { env: { HOME: '/h', MCP_ROOTS_STATE_DIR: shortDir() } });
  t.equal(empty.code, 0);
  t.match(empty.err, /No decisions recorded/);
});

void t.test('--follow prints new entries, across a rotation, until stopped', async (t) => {
  const { env, file } = setup();
  const child = spawn(process.execPath, [bin('rootsctl'), 'log', '--follow', '--refused'], {
    env: { ...process.env, ...env },
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  t.teardown(() => child.kill('SIGKILL'));
  await waitFor(() => out.includes('asked: decline'), 10_000, 'the existing entries');
  const entry = (path: string, allowed: boolean) =>
    JSON.stringify({
      time: new Date().toISOString(),
      kind: 'check',
      server: 'fs',
      path,
      access: 'read',
      allowed,
      reason: 'r',
    }) + '\n';
  appendFileSync(file, entry('/h/allowed-one', true));
  appendFileSync(file, entry('/h/refused-one', false));
  await waitFor(() => out.includes('refused-one'), 10_000, 'the appended entry');
  t.notMatch(out, /allowed-one/, 'the filter applies to followed entries');
  // A followed row lines up with the table printed before it: its detail starts where theirs do.
  const detailAt = (line: string) => line.indexOf('~/');
  const rows = out.split('\n').filter((l) => /REFUSED|declined|asked/.test(l));
  const followed = rows.find((l) => l.includes('refused-one'))!;
  t.equal(
    detailAt(followed),
    detailAt(rows.find((l) => l.includes('REFUSED') && l !== followed)!),
    `followed rows line up with the table:\n${out}`,
  );
  renameSync(file, `${file}.1`);
  writeFileSync(file, entry('/h/after-rotation', false));
  await waitFor(() => out.includes('after-rotation'), 10_000, 'the entry after rotation');
  child.kill('SIGINT');
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  t.equal(code, 0, 'Ctrl-C ends it cleanly');
});

void t.test(
  '--socket reads the log that daemon writes, wherever its state directory is',
  async (t) => {
    const d = await startDaemon(t, 'version: 1\nservers:\n  fs:\n    roots: [{path: /h/work}]\n');
    const c = await d.connect('probe');
    await c.check('fs', '/h/.ssh/id_ed25519', 'read');
    await c.close();
    // The daemon writes its log a moment after it answers.
    const written = join(d.stateDir, 'decisions.jsonl');
    await waitFor(
      () => existsSync(written) && readFileSync(written, 'utf8').includes('id_ed25519'),
    );
    // The default state directory holds another log: --socket names the daemon meant, as it does
    // for every other command.
    const { env } = setup();
    const shown = await rootsctl(['log', '--socket', d.socket, '--refused'], { env });
    t.equal(shown.code, 0, shown.err);
    t.match(shown.out, /fs\s+REFUSED read\s+~\/\.ssh\/id_ed25519/);
    t.notMatch(shown.out, /asked: decline/, 'not the default directory');
    t.notMatch(shown.err, /NOTE/, 'nothing to say of a sound state directory');
    const json = await rootsctl(['log', '--socket', d.socket, '--json'], { env });
    t.ok(
      json.out.split('\n').some((l) => l.includes('"kind":"check"') && l.includes('id_ed25519')),
    );
    // --state-dir still says where to read, daemon or not.
    const explicit = await rootsctl(['log', '--socket', d.socket, '--state-dir', d.stateDir], {
      env,
    });
    t.equal(explicit.code, 0, explicit.err);
    t.match(explicit.out, /id_ed25519/);
    const gone = await rootsctl(['log', '--socket', join(shortDir(), 'none.sock')], { env });
    t.equal(gone.code, 3, 'no daemon on that socket');
    t.match(gone.err, /rootsctl: /);
  },
);

void t.test(
  'a state directory replaced while the daemon runs: log and status say so, nothing is lost silently',
  async (t) => {
    const d = await startDaemon(t, 'version: 1\nservers:\n  fs:\n    roots: [{path: /h/work}]\n');
    const c = await d.connect('probe');
    await c.check('fs', '/h/before-swap', 'read');
    // A grant made: the grants file is in the directory that is then replaced.
    const granted = await rootsctl(['grant', 'fs', d.dir, '--for', '1h', '--socket', d.socket], {
      env: { HOME: '/h' },
    });
    t.equal(granted.code, 0, granted.err);
    const written = join(d.stateDir, 'decisions.jsonl');
    await waitFor(
      () => existsSync(written) && readFileSync(written, 'utf8').includes('before-swap'),
    );
    // The person's own doing (nobody else may rename in the directory above it): moved away, and
    // a new, empty one made in its place.
    renameSync(d.stateDir, `${d.stateDir}.old`);
    mkdirSync(d.stateDir, { mode: 0o700 });
    await c.check('fs', '/h/after-swap', 'read');
    await c.close();
    // The open log file outlives its directory: written there, the decision would be lost from
    // the log the person reads, without a word.
    await waitFor(
      () => d.logs.some((l) => l.includes('cannot write the decision log')),
      10_000,
      "the daemon's warning",
    );
    t.notMatch(readFileSync(join(`${d.stateDir}.old`, 'decisions.jsonl'), 'utf8'), /after-swap/);
    const replaced =
      /NOTE: the state directory .* is not the one the daemon started on \(it was replaced\).* records no decisions/;
    const named = await rootsctl(['log', '--socket', d.socket], { env: { HOME: '/h' } });
    t.equal(named.code, 0, named.err);
    t.match(named.err, replaced, '--socket');
    t.match(named.err, /No decisions recorded in [^\n]*decisions\.jsonl\.\n/, 'not "yet"');
    // Without --socket: the daemon rootsctl finds by itself, asked only about its directory.
    const env = { HOME: '/h', MCP_ROOTS_SOCKET: d.socket, MCP_ROOTS_STATE_DIR: d.stateDir };
    const found = await rootsctl(['log'], { env });
    t.equal(found.code, 0, found.err);
    t.match(found.err, replaced, 'the default daemon');
    const other = await rootsctl(['log'], {
      env: { ...env, MCP_ROOTS_STATE_DIR: setup().state },
    });
    t.notMatch(other.err, /NOTE/, "another directory's log is not that daemon's");
    const replacedLine =
      /ERROR: +the state directory .* \(it was replaced\)[^\n]*Restart mcp-rootsd \(pid \d+\)[^\n]*\n +\(its grants are not used and no decisions are recorded until a restart\)/;
    const status = await rootsctl(['status', '--socket', d.socket], { env: { HOME: '/h' } });
    t.match(status.out, replacedLine);
    t.match(status.out, `state:    ${d.stateDir}\n`, 'where the state directory is');
    t.equal(status.code, 1, 'an error');
    // The grants file's reload fails with the same words: said once, and not as a file to fix.
    await waitFor(async () => {
      const s = await (await d.connect('probe')).status();
      return s.policy.errors.some((e) => e.file.endsWith('grants.yaml'));
    });
    const again = await rootsctl(['status', '--socket', d.socket], { env: { HOME: '/h' } });
    t.match(again.out, replacedLine);
    t.equal(again.out.split('is not the one the daemon started on').length, 2, 'said once');
    t.notMatch(again.out, /grants file is fixed or moved away/);
    const list = await rootsctl(['list', 'fs', '--socket', d.socket], { env: { HOME: '/h' } });
    t.match(list.out, /NOTE: mcp-rootsd no longer uses its state directory/);
    t.notMatch(list.out, /the grants file has/);
  },
);

void t.test('--socket to a daemon that keeps no log says what to do', async (t) => {
  const d = await startDaemon(t, 'version: 1\nservers: {}\n', { decisionLogBytes: 0 });
  const r = await rootsctl(['log', '--socket', d.socket], { env: { HOME: '/h' } });
  t.equal(r.code, 1);
  t.match(r.err, /names no decision log: it keeps none .*give --state-dir DIR/);
});

void t.test('a list change shows what was added, removed and changed', async (t) => {
  const state = shortDir();
  const entry = (e: object) => JSON.stringify({ time: at(1), kind: 'roots', server: 'fs', ...e });
  writeFileSync(
    join(state, 'decisions.jsonl'),
    [
      entry({ added: ['file:///h/a'], removed: ['file:///h/b'] }),
      entry({ added: [], removed: [], changed: ['file:///h/c'] }),
    ].join('\n') + '\n',
  );
  const r = await rootsctl(['log'], { env: { HOME: '/h', MCP_ROOTS_STATE_DIR: state } });
  t.equal(r.code, 0, r.err);
  const [, added, changed] = r.out.trimEnd().split('\n');
  t.match(added, /fs\s+roots \+1 -1\s+\+file:\/\/\/h\/a -file:\/\/\/h\/b$/);
  t.match(changed, /fs\s+roots \+0 -0 ~1\s+~file:\/\/\/h\/c$/);
});
