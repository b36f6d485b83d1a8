/**
 * A process changing a directory in a loop as fast as it can (a link re-pointed by rename, over
 * and over), for a fixed time: what floods a watch of that directory with events.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { Test } from 'tap';

/** The flooding processes, and whether they still run (a check made while they do counts). */
export interface Flood {
  running(): boolean;
  /** Resolves once every process has exited. */
  done: Promise<void>;
}

/**
 * `processes` loops in `dir`, each on a link of its own, for `seconds`: two, so that the
 * listeners are outrun on a fast machine too. Each stops by its own clock, so that a daemon (or
 * a test) whose event loop the flood holds still sees it end.
 */
export function startFlood(t: Test, dir: string, seconds: number, processes = 2): Flood {
  const children: ChildProcess[] = [];
  for (let i = 0; i < processes; i++) {
    const child = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('node:fs');
         const [link, ms] = [process.argv[1], Number(process.argv[2])];
         const end = Date.now() + ms;
         for (let i = 0; Date.now() < end; i++) {
           fs.symlinkSync(i % 2 ? 'a' : 'b', link + '.new');
           fs.renameSync(link + '.new', link);
         }`,
        join(dir, `flood-${i}`),
        String(seconds * 1000),
      ],
      { stdio: 'ignore' },
    );
    children.push(child);
  }
  t.teardown(() => {
    for (const c of children) c.kill('SIGKILL');
  });
  const exited = children.map((c) =>
    c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : once(c, 'exit'),
  );
  return {
    running: () => children.some((c) => c.exitCode === null && c.signalCode === null),
    done: Promise.all(exited).then(() => {}),
  };
}
