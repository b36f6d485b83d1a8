/**
 * `rootsctl log` reads the file a daemon names (`--socket`: whatever answers there) or the state
 * directory's. Before, it read whatever was there: a FIFO blocked it forever, a link to
 * /dev/zero read until memory ran out, a directory or a relative, non-string or NUL-holding
 * path failed with Node's raw message, and a file another user owns (or may write) was shown as
 * the daemon's decisions. Each row makes one such log, as the state directory's and as the one a
 * fake daemon names; rootsctl runs as a real process (stopped if it hangs) and must refuse it,
 * saying what and where, with nothing raw on the terminal.
 */
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import t from 'tap';
import { bin } from '../helpers/bin.js';
import { daemonStatus, fakeStatusDaemon } from '../helpers/fake-status-daemon.js';
import { shortDir } from '../helpers/short-dir.js';

/** What a terminal would act on: none of it may reach stderr raw. */
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const entry = JSON.stringify({ time: new Date().toISOString(), kind: 'lockdown', on: true });

/** Run the built rootsctl; a run still going after 20 s is killed (a hang is a failure). */
function run(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; out: string; err: string; killed: boolean }>(
    (resolve) => {
      const child = spawn(process.execPath, [bin('rootsctl'), ...args], {
        env: { PATH: process.env.PATH ?? '', ...env },
      });
      let out = '';
      let err = '';
      let killed = false;
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const timer = setTimeout(() => {
        killed = true;
        child.kill('SIGKILL');
      }, 20_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, out, err, killed });
      });
    },
  );
}

/** Each row puts something at `<state>/decisions.jsonl` (or its rotated copy). */
const ROWS: [string, (state: string) => void, RegExp][] = [
  ['a FIFO', (s) => execFileSync('mkfifo', [join(s, 'decisions.jsonl')]), /is a FIFO/],
  [
    'a FIFO as a rotated copy',
    (s) => {
      writeFileSync(join(s, 'decisions.jsonl'), `${entry}\n`);
      execFileSync('mkfifo', [join(s, 'decisions.jsonl.2')]);
    },
    /decisions\.jsonl\.2 is a FIFO/,
  ],
  [
    'a link to /dev/zero',
    (s) => symlinkSync('/dev/zero', join(s, 'decisions.jsonl')),
    /symbolic link/,
  ],
  ['a directory', (s) => mkdirSync(join(s, 'decisions.jsonl')), /is a directory/],
  [
    'a file every user may write',
    (s) => {
      writeFileSync(join(s, 'decisions.jsonl'), `${entry}\n`);
      chmodSync(join(s, 'decisions.jsonl'), 0o666);
    },
    /may be written by every user \(mode 666\)/,
  ],
];
if (process.getuid?.() === 0) {
  ROWS.push([
    "another user's file",
    (s) => {
      writeFileSync(join(s, 'decisions.jsonl'), `${entry}\n`, { mode: 0o600 });
      chownSync(join(s, 'decisions.jsonl'), 65534, 65534);
    },
    /belongs to user id 65534, not to you/,
  ]);
}

for (const [name, make, says] of ROWS) {
  void t.test(name, async (t) => {
    const state = shortDir();
    make(state);
    const local = await run(['log', '--state-dir', state], { HOME: '/h' });
    t.notOk(local.killed, 'the state directory: rootsctl ends');
    t.equal(local.code, 1, local.err);
    t.match(local.err, says);
    t.match(local.err, /Not read: check what named this file/);
    t.equal(local.out, '', 'no entries');

    const socket = await fakeStatusDaemon(
      t,
      daemonStatus({ decisionLog: join(state, 'decisions.jsonl') }),
    );
    const named = await run(['log', '--socket', socket], { HOME: '/h' });
    t.notOk(named.killed, 'the daemon-named file: rootsctl ends');
    t.equal(named.code, 1, named.err);
    t.match(named.err, says);

    const follow = await run(['log', '--follow', '--state-dir', state], { HOME: '/h' });
    t.notOk(follow.killed, '--follow: rootsctl ends');
    t.equal(follow.code, 1, follow.err);
    t.match(follow.err, says);
  });
}

/** Values a fake daemon gives as its `decisionLog`, and what rootsctl must say. */
const NAMED: [string, unknown, RegExp][] = [
  ['a number', 42, /a value of type number, not a path/],
  ['a list', ['/h/decisions.jsonl'], /a list, not a path/],
  ['an object', { path: '/h/decisions.jsonl' }, /a value of type object, not a path/],
  ['null', null, /null, not a path/],
  ['a relative path', 'state/decisions.jsonl', /not an absolute path/],
  ['the empty string', '', /not an absolute path/],
  ['a NUL', '/tmp/x\u0000/decisions.jsonl', /control characters/],
  ['an escape sequence', '/tmp/\u001b]52;c;cHduZWQ=\u0007/decisions.jsonl', /control characters/],
  ['a C1 control', '/tmp/\u009b31m/decisions.jsonl', /control characters/],
  [
    'a very long path',
    `/${'a/'.repeat(100_000)}decisions.jsonl`,
    /longer than any the system opens/,
  ],
  ['/dev/zero', '/dev/zero', /not a file named decisions\.jsonl/],
  ['/dev/urandom', '/dev/urandom', /not a file named decisions\.jsonl/],
  ['/proc/self/environ', '/proc/self/environ', /not a file named decisions\.jsonl/],
  ['/etc/passwd', '/etc/passwd', /not a file named decisions\.jsonl/],
];

for (const [name, value, says] of NAMED) {
  void t.test(`a daemon naming ${name} as its log`, async (t) => {
    const socket = await fakeStatusDaemon(t, daemonStatus({ decisionLog: value }));
    const r = await run(['log', '--socket', socket], { HOME: '/h' });
    t.notOk(r.killed, 'rootsctl ends');
    t.equal(r.code, 1, r.err);
    t.match(r.err, /the daemon on .* names its decision log as/);
    t.match(r.err, says);
    t.match(r.err, /give --state-dir DIR/);
    t.notMatch(r.err, RAW, 'nothing raw reaches the terminal');
    t.ok(r.err.length < 2000, 'the message is short whatever the daemon said');
  });
}
