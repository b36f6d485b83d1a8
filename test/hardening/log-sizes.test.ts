/**
 * `rootsctl log` reads the whole log into memory, and `--follow` everything appended at once.
 * Before, neither had a bound: a log of any size (a sparse file costs its owner nothing, and
 * `--decision-log-kib` has no upper limit) was read whole, and a follower allocated whatever was
 * appended in one go. Now at most 64 MiB are read, the newest, and rootsctl says what it left
 * out. Each row makes a sparse log bigger than that, with entries at its end: they are shown,
 * the note names the file, and the hole before them is not read.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { bin } from '../helpers/bin.js';
import { rootsctl } from '../helpers/cli.js';
import { waitFor } from '../helpers/poll.js';
import { shortDir } from '../helpers/short-dir.js';

const MIB = 1024 * 1024;

const line = (path: string): string =>
  `${JSON.stringify({
    time: new Date().toISOString(),
    kind: 'check',
    server: 'fs',
    path,
    access: 'read',
    allowed: false,
    reason: 'r',
  })}\n`;

void t.test('a log bigger than the cap is read from its newest bytes', async (t) => {
  const state = shortDir();
  const file = join(state, 'decisions.jsonl');
  writeFileSync(file, line('/h/oldest'));
  truncateSync(file, 80 * MIB);
  appendFileSync(file, `\n${line('/h/newest')}`);
  writeFileSync(`${file}.1`, line('/h/rotated'));
  const r = await rootsctl(['log', '--state-dir', state], { env: { HOME: '/h' } });
  t.equal(r.code, 0, r.err);
  t.match(r.out, /~\/newest/, 'the newest entry is shown');
  t.notMatch(r.out, /oldest|rotated/, 'what lies beyond the cap is not');
  t.match(r.err, /decisions\.jsonl: left out the oldest \d+ bytes of the decision log/);
});

void t.test('--follow reads a big append from its newest bytes', async (t) => {
  const state = shortDir();
  const file = join(state, 'decisions.jsonl');
  writeFileSync(file, line('/h/first'));
  const child = spawn(process.execPath, [bin('rootsctl'), 'log', '--follow'], {
    env: { PATH: process.env.PATH ?? '', HOME: '/h', MCP_ROOTS_STATE_DIR: state },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  t.teardown(() => child.kill('SIGKILL'));
  await waitFor(() => out.includes('first'), 10_000, 'the existing entry');
  // A line with no end, 80 MiB of it (a hole), then an entry.
  appendFileSync(file, '{"time":"');
  truncateSync(file, 80 * MIB);
  appendFileSync(file, `\n${line('/h/after-the-hole')}`);
  await waitFor(() => out.includes('after-the-hole'), 20_000, 'the entry after the hole');
  child.kill('SIGINT');
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  t.equal(code, 0, err);
  t.match(err, /decisions\.jsonl: left out the oldest \d+ bytes of the decision log/);
});
