/**
 * A child process a test talks to line by line (the proxy, as a host would): its stdout cut into
 * lines at the `\n` byte, its stderr kept, one line written at a time, and killed when the test
 * ends if a failed step left it running.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

export interface LineChild {
  child: ChildProcessWithoutNullStreams;
  /** Every line the child wrote to stdout so far. */
  lines: () => string[];
  stderr: () => string;
  /** Write one line: a string as it is, an object as JSON. */
  send: (line: string | object) => void;
  exit: Promise<number | null>;
}

/** Start `cmd`, owned by `t`; `onLine` sees each stdout line as it arrives. */
export function spawnLineChild(
  t: { teardown(fn: () => unknown): void },
  cmd: { command: string; args: string[]; env: Record<string, string> },
  onLine: (line: string) => void = () => {},
): LineChild {
  const child = spawn(cmd.command, cmd.args, { env: cmd.env });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const stdout: string[] = [];
  let err = '';
  let pending = Buffer.alloc(0);
  child.stdout.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    for (let nl = pending.indexOf(10); nl !== -1; nl = pending.indexOf(10)) {
      const line = pending.subarray(0, nl).toString();
      pending = pending.subarray(nl + 1);
      stdout.push(line);
      onLine(line);
    }
  });
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    lines: () => [...stdout],
    stderr: () => err,
    send: (line) =>
      child.stdin.write((typeof line === 'string' ? line : JSON.stringify(line)) + '\n'),
    exit,
  };
}
