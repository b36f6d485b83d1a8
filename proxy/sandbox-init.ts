/**
 * The sandbox's own init (bwrap's pid 1 in the sandbox's PID namespace), held by the proxy so that
 * a stop ends the whole sandbox. When a PID namespace's init dies the kernel kills every other
 * process in it, whatever they did to stay: a server's `setsid` background job, a daemon it
 * forked, a process that ignores signals. The proxy's own child is the outer bwrap, whose exit
 * alone proves nothing: the init dies with it only through its parent-death signal, which lives
 * inside the sandbox.
 *
 * A pid is reused once its process is gone, so the init is named by its pid and its start time
 * (/proc/PID/stat), and killed only while both match.
 */
import { readFileSync } from 'node:fs';

/** Field 22 of /proc/PID/stat (its start, in clock ticks since boot), and field 3 (its state). */
function stat(pid: number): { start: string; state: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces and parentheses itself.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const start = fields[19];
  return state === undefined || start === undefined ? undefined : { start, state };
}

/** Every init still held, for the proxy's exit (an exit without a stop: an internal error). */
const held = new Set<SandboxInit>();
let exitHook = false;

export class SandboxInit {
  private constructor(
    readonly pid: number,
    private readonly start: string,
  ) {}

  /**
   * The init bwrap named in its `--info-fd` JSON, held from now on; undefined when the text names
   * no pid or the process is gone already (then nothing of the sandbox runs).
   */
  static fromInfo(info: string): SandboxInit | undefined {
    let pid: unknown;
    try {
      pid = (JSON.parse(info) as Record<string, unknown>)['child-pid'];
    } catch {
      return undefined;
    }
    if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 1) return undefined;
    const s = stat(pid);
    if (s === undefined) return undefined;
    const init = new SandboxInit(pid, s.start);
    held.add(init);
    if (!exitHook) {
      exitHook = true;
      process.on('exit', () => {
        for (const i of held) i.kill();
      });
    }
    return init;
  }

  /** Whether the init still runs (a zombie has ended, and its namespace with it). */
  alive(): boolean {
    const s = stat(this.pid);
    return s !== undefined && s.start === this.start && s.state !== 'Z' && s.state !== 'X';
  }

  /** SIGKILL the init, and so every process of the sandbox; nothing if it is gone already. */
  kill(): void {
    if (!this.alive()) {
      held.delete(this);
      return;
    }
    try {
      process.kill(this.pid, 'SIGKILL');
    } catch {
      // It went between the check and the signal.
    }
  }

  /** Resolves once the init has ended (SIGKILL first), polling; at most `ms`. */
  async end(ms: number): Promise<boolean> {
    this.kill();
    const until = Date.now() + ms;
    while (this.alive()) {
      if (Date.now() > until) return false;
      await new Promise((r) => setTimeout(r, 5));
    }
    held.delete(this);
    return true;
  }
}
