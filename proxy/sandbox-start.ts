/**
 * The proxy's side of a sandbox's start, between bwrap's spawn and the server's first
 * instruction: hand bwrap its system call filter, take hold of the sandbox's init, read the mounts
 * the gate shows, compare them with the layout, and let the server start only if they match
 * (sandbox-gate.ts, sandbox-check.ts, sandbox-init.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { mountProblems, parseMountinfo } from './sandbox-check.js';
import { sandboxFilter } from '../common/seccomp-filter.js';
import { descriptorProblems, GATE_FDS } from './sandbox-gate.js';
import { SandboxInit } from './sandbox-init.js';
import type { SandboxOp } from './sandbox.js';

/** How long bwrap may take to lay out the mounts (a wedged FUSE mount would hang it for ever). */
const LAYOUT_TIMEOUT_MS = 30_000;

/**
 * The stdio of a sandboxed spawn: the server's three, then the gate's (GATE_FDS). Its stderr too
 * is a pipe, which the proxy copies to its own (server-process.ts): the proxy's stderr may be a
 * file (a host's log), and a descriptor of a file lets whoever holds it open the file anew,
 * through `/proc/self/fd/2`, to read and write, wherever the file is.
 */
export const SANDBOX_STDIO = ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'] as const;

/**
 * A sandbox that passed its gate, or why it was stopped before the server started, and whether
 * the paths may have changed under bwrap (a new layout may then start).
 */
export type Opened = { init: SandboxInit } | { problem: string; moved: boolean };

/** Everything `stream` gives until it ends, or until `done(text)` says enough. */
function collect(stream: Readable, done: (text: string) => boolean = () => false): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const finish = (): void => {
      stream.off('data', onData);
      resolve(text);
    };
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      if (done(text)) finish();
    };
    stream.on('data', onData);
    stream.once('end', finish);
    stream.once('error', finish);
    stream.once('close', finish);
  });
}

/** The gate's two sections (its mountinfo, its descriptors), each ended by an empty line. */
function gateSections(text: string): [string, string] {
  const end = text.indexOf('\n\n');
  return end < 0 ? [text, ''] : [text.slice(0, end + 1), text.slice(end + 2)];
}

/** Whether the gate has shown both sections. */
function gateDone(text: string): boolean {
  const [, descriptors] = gateSections(text);
  return descriptors.endsWith('\n\n') || descriptors === '\n';
}

/**
 * Run the gate of `child`, a bwrap started with `SANDBOX_STDIO` on `layout`, under the system
 * call filter (Unix sockets refused unless `unixSockets`).
 */
export async function openSandbox(
  child: ChildProcess,
  { layout, unixSockets }: { layout: readonly SandboxOp[]; unixSockets: boolean },
): Promise<Opened> {
  const fd = (n: number) => child.stdio[n] as (Readable & Writable) | null;
  const [filter, info, mounts, go] = [
    fd(GATE_FDS.filter)!,
    fd(GATE_FDS.info)!,
    fd(GATE_FDS.mounts)!,
    fd(GATE_FDS.go)!,
  ];
  const program = sandboxFilter(process.arch, { unixSockets });
  // The probe refuses an architecture without a filter; this is the same refusal, fail closed.
  if (program === undefined)
    return { problem: `no system call filter for ${process.arch}`, moved: false };
  filter.on('error', () => {}); // bwrap gone before reading it: its exit says why
  go.on('error', () => {});
  filter.end(program);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), LAYOUT_TIMEOUT_MS);
  });
  const read = Promise.all([collect(info), collect(mounts, gateDone)]);
  const got = await Promise.race([read, late]);
  clearTimeout(timer);
  // The init is held as soon as it is known, whatever comes next: every way out below ends it.
  const init = got === 'late' ? undefined : SandboxInit.fromInfo(got[0]);
  const refuse = async (problem: string, moved = false): Promise<Opened> => {
    go.end();
    mounts.destroy();
    await init?.end(2000);
    return { problem, moved };
  };
  if (got === 'late') {
    child.kill('SIGKILL');
    return refuse(`bwrap did not lay out the sandbox within ${LAYOUT_TIMEOUT_MS / 1000} s`);
  }
  if (init === undefined || !gateDone(got[1])) {
    // The probe ran bwrap already: a failure now is most often a path that went away since the
    // plan (bwrap cannot find a source), which a new layout sees.
    return refuse('bwrap could not start the sandbox (its own message is above in the log)', true);
  }
  const [mountinfo, descriptors] = gateSections(got[1]);
  const held = descriptorProblems(descriptors);
  if (held.length > 0) return refuse(`the sandbox would hold more than it mounts: ${held[0]}`);
  const host = parseMountinfo(await readFile('/proc/self/mountinfo', 'latin1'));
  const problems = mountProblems(layout, parseMountinfo(mountinfo), host);
  if (problems.length > 0) {
    return refuse(
      `the sandbox's mounts are not where its layout put them, so a path changed while bwrap laid them out (a directory swapped for a link?): ${problems.slice(0, 3).join('; ')}`,
      true,
    );
  }
  mounts.destroy();
  go.end('go\n');
  return { init };
}
