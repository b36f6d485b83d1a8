/**
 * A sandbox ends with its stop: no process of it outlives a restart, the proxy's exit, or the
 * proxy's death. The attack: a server, running as the same user as the sandbox's own init
 * (bwrap's pid 1), ptraces that init and clears its parent-death signal (`prctl(PR_SET_PDEATHSIG,
 * 0)`, here with gdb), then leaves a background writer. The outer bwrap's exit then no longer
 * takes the PID namespace down, and the writer keeps the old mounts: a root made read-only stays
 * writable to it, a removed root readable.
 *
 * Two walls, each tested alone: inside, the server cannot reach its init (seccomp refuses
 * `ptrace`, and /proc/1/mem is masked); outside, the proxy kills the init itself on every stop,
 * even one whose parent-death signal is gone (cleared here from the host, where nothing stops
 * gdb), and the kernel then kills everything in the namespace.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startDaemon } from '../helpers/daemon.js';
import { poll } from '../helpers/poll.js';
import { startHostile, type Proxied } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

/** The pids whose command line holds `text`. */
function pidsWith(text: string): number[] {
  return readdirSync('/proc').flatMap((p) => {
    if (!/^\d+$/.test(p)) return [];
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(text) ? [Number(p)] : [];
    } catch {
      return [];
    }
  });
}

const parentOf = (pid: number): number =>
  Number(/^PPid:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

/** The host pid of the sandbox's init: the bwrap whose parent is the outer bwrap (same argv). */
function sandboxInit(mark: string): number {
  const bwraps = pidsWith(mark).filter(
    (p) => readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'bwrap',
  );
  const init = bwraps.find((p) => bwraps.includes(parentOf(p)));
  if (init === undefined) throw new Error(`no sandbox init among ${bwraps.join(', ')}`);
  return init;
}

/**
 * gdb, from the host, clears the init's parent-death signal: what the attack does inside. The
 * init waits in `wait4`, stopped just past its `syscall` instruction: gdb points it back there,
 * runs `prctl(PR_SET_PDEATHSIG, 0)` (157) with one step, and sets it up to make its `wait4`
 * again. Not gdb's `call`: that writes the whole register state back, which some kernels refuse
 * on CPUs with AMX ("Couldn't write extended state status"), leaving the init's wait broken.
 */
function clearParentDeathSignal(t: Test, pid: number): void {
  const saved = ['rdi', 'rsi', 'rdx', 'r10', 'r8', 'r9'];
  const commands = [
    'x/2bx $pc-2',
    'set $s_pc = $pc',
    'set $s_nr = $orig_rax',
    ...saved.map((r) => `set $s_${r} = $${r}`),
    'set $pc = $s_pc - 2',
    ...['rax = 157', 'rdi = 1', 'rsi = 0', 'rdx = 0', 'r10 = 0', 'r8 = 0'].map((a) => `set $${a}`),
    'stepi',
    'print $rax',
    'set $pc = $s_pc - 2',
    'set $rax = $s_nr',
    ...saved.map((r) => `set $${r} = $s_${r}`),
    'detach',
  ];
  const out = execFileSync(
    'gdb',
    ['-p', String(pid), '-batch', ...commands.flatMap((c) => ['-ex', c])],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  t.match(out, /:\s+0x0f\s+0x05/, `the init (pid ${pid}) stopped just past a system call`);
  t.match(out, /\$1 = 0/, `the init (pid ${pid}) has no parent-death signal now`);
}

/** A background writer that leaves the server's session: `marker` in its command line. */
const survivor = (log: string, marker: string): string =>
  `setsid sh -c 'while :; do echo x >> ${log}; sleep 0.05; done # ${marker}' </dev/null >/dev/null 2>&1 &`;

const grows = async (file: string): Promise<boolean> => {
  const size = existsSync(file) ? statSync(file).size : 0;
  return poll(() => existsSync(file) && statSync(file).size > size, 10_000);
};

async function setUp(t: Test): Promise<{
  h: Proxied;
  d: Awaited<ReturnType<typeof startDaemon>>;
  work: string;
  mark: string;
  policy: (readOnly: boolean) => string;
}> {
  t.ok(spawnSync('gdb', ['--version']).status === 0, 'gdb is installed (.ci/run installs it)');
  const dir = ownedShortDir(t);
  const work = join(dir, 'work');
  mkdirSync(work);
  const mark = join(dir, 'mark');
  const policy = (readOnly: boolean) =>
    `version: 1\nservers:\n  h:\n    sandbox: true\n    roots:\n      - path: ${work}\n        readOnly: ${readOnly}\n`;
  const d = await startDaemon(t, policy(false), { dir });
  const h = await startHostile(t, d.socket, { flags: [`--mark=${mark}`] });
  return { h, d, work, mark, policy };
}

/** Start a survivor under `marker`, killed at the end whatever happens. */
async function leaveSurvivor(t: Test, h: Proxied, log: string, marker: string): Promise<void> {
  t.teardown(() => {
    for (const p of pidsWith(marker)) process.kill(p, 'SIGKILL');
  });
  await h.call('attempt', { action: 'shell', ref: survivor(log, marker) });
  t.ok(await grows(log), 'the survivor writes');
}

const gone = (marker: string): Promise<boolean> =>
  poll(() => pidsWith(marker).length === 0, 10_000);

void t.test('inside, the server cannot reach its sandbox’s init', async (t) => {
  const { h } = await setUp(t);
  const shell = async (cmd: string) =>
    (await h.call('attempt', { action: 'shell', ref: cmd })).text;
  const gdb = await shell(`gdb -p 1 -batch -ex 'call (int)prctl(1,0,0,0,0)' -ex detach`);
  t.match(gdb, /ptrace: Operation not permitted/, 'ptrace is refused');
  t.notMatch(gdb, /\$1 = 0/, 'the call did not run');
  t.match(await shell('cat /proc/1/mem'), /Permission denied/, '/proc/1/mem cannot be read');
  t.match(await shell('echo x > /proc/1/task/1/mem'), /Permission denied/, 'nor written');
});

void t.test('a restart ends the old sandbox, its init’s signal cleared', async (t) => {
  const { h, d, work, mark, policy } = await setUp(t);
  clearParentDeathSignal(t, sandboxInit(mark));
  const marker = `SURVIVOR-RESTART-${process.pid}`;
  await leaveSurvivor(t, h, join(work, 'log'), marker);
  d.writePolicy(policy(true));
  await waitFor(() => h.stderr().includes('restarted the server (ms:'), 30_000, 'the restart');
  t.ok(await gone(marker), 'nothing of the old sandbox runs');
  t.match((await h.call('attempt', { action: 'write', ref: join(work, 'x') })).text, /^EROFS/);
});

void t.test('the proxy’s exit ends the sandbox, its init’s signal cleared', async (t) => {
  const { h, work, mark } = await setUp(t);
  clearParentDeathSignal(t, sandboxInit(mark));
  const marker = `SURVIVOR-EXIT-${process.pid}`;
  await leaveSurvivor(t, h, join(work, 'log'), marker);
  await h.client.close();
  t.ok(await gone(marker), 'nothing of the sandbox runs');
});

void t.test('the proxy killed: the sandbox ends with it', async (t) => {
  // The server's own try to keep the init alive fails (the first test), so the parent-death
  // signals of bwrap and its init take the namespace down with the proxy.
  const { h, work } = await setUp(t);
  const marker = `SURVIVOR-KILLED-${process.pid}`;
  await h.call('attempt', {
    action: 'shell',
    ref: `gdb -p 1 -batch -ex 'call (int)prctl(1,0,0,0,0)' -ex detach`,
  });
  await leaveSurvivor(t, h, join(work, 'log'), marker);
  const proxy = (h.client.transport as StdioClientTransport).pid;
  t.ok(proxy !== null, 'the proxy runs');
  process.kill(proxy!, 'SIGKILL');
  t.ok(await gone(marker), 'nothing of the sandbox runs');
});
