/**
 * The peer for watch-latency: watchman's subscription to new directories under a directory, when
 * `watchman` is on PATH (it is not a dependency). The root gets `settle: 1` in its
 * `.watchmanconfig`, watchman's shortest delay, so the comparison is with watchman at its fastest.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Whether a `watchman` binary answers here. */
export function watchmanAvailable(): boolean {
  try {
    execFileSync('watchman', ['--version'], { stdio: 'ignore', timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

/** A live subscription: `next(name)` resolves when watchman reports that entry. */
export interface WatchmanPeer {
  next(name: string): Promise<number>;
  close(): void;
}

/** Subscribe to directories created under `dir` (which must exist). */
export async function watchmanSubscribe(dir: string): Promise<WatchmanPeer> {
  writeFileSync(join(dir, '.watchmanconfig'), '{"settle": 1}\n');
  const project = JSON.parse(
    execFileSync('watchman', ['--no-pretty', 'watch-project', dir], { encoding: 'utf8' }),
  ) as { watch: string; relative_path?: string };
  const child: ChildProcess = spawn(
    'watchman',
    ['--persistent', '--json-command', '--no-pretty', '--server-encoding=json'],
    { stdio: ['pipe', 'pipe', 'ignore'] },
  );
  const waiting = new Map<string, (at: number) => void>();
  let buf = '';
  let subscribed: (() => void) | undefined;
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    const at = performance.now();
    buf += chunk;
    for (let j = buf.indexOf('\n'); j >= 0; j = buf.indexOf('\n')) {
      const line = buf.slice(0, j);
      buf = buf.slice(j + 1);
      if (line.trim() === '') continue;
      const pdu = JSON.parse(line) as { subscribe?: string; files?: string[] };
      if (pdu.subscribe !== undefined && pdu.files === undefined) subscribed?.();
      for (const f of pdu.files ?? []) {
        waiting.get(f)?.(at);
        waiting.delete(f);
      }
    }
  });
  const ready = new Promise<void>((resolve) => (subscribed = resolve));
  const query = {
    expression: ['type', 'd'],
    fields: ['name'],
    ...(project.relative_path ? { relative_root: project.relative_path } : {}),
  };
  child.stdin!.write(`${JSON.stringify(['subscribe', project.watch, 'bench', query])}\n`);
  await ready;
  return {
    next: (name) => new Promise((resolve) => waiting.set(name, resolve)),
    close: () => {
      child.kill();
      try {
        execFileSync('watchman', ['watch-del', project.watch], { stdio: 'ignore' });
      } catch {
        // gone already
      }
    },
  };
}
