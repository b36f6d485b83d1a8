/**
 * A process changing a directory in a loop as fast as it can (a link re-pointed by rename, over
 * and over), until stopped or for at most a fixed time: what floods a watch of that directory
 * with events.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { Test } from 'tap';
import { guardedWatch } from '../../common/watch-flood.js';

/** The flooding processes, and whether they still run (a check made while they do counts). */
export interface Flood {
  running(): boolean;
  /** Resolves once every process has exited. */
  done: Promise<void>;
  /**
   * End the flood now, once the checks made while it runs are done; resolves as `done`. A flood
   * costs a core while it runs, so a test ends it as soon as it has what it needs.
   */
  stop(): Promise<void>;
}

/**
 * `processes` loops in `dir`, each on a link of its own, for at most `seconds`: two, so that the
 * listeners are outrun on a fast machine too. Each stops by its own clock too, so that a daemon
 * (or a test) whose event loop the flood holds, and so cannot stop it, still sees it end.
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
  const done = Promise.all(exited).then(() => {});
  return {
    running: () => children.some((c) => c.exitCode === null && c.signalCode === null),
    done,
    stop: () => {
      for (const c of children) c.kill('SIGKILL');
      return done;
    },
  };
}

/**
 * Overflow the kernel's inotify queue for this process: `files` empty files made in `dir` while
 * this process's event loop is held (a synchronous child), then `last` made in `dir`. More
 * files than `fs.inotify.max_queued_events` (16,384 by default) and the events after the
 * queue's end are lost, `last`'s among them; libuv drops the overflow notice without a word.
 */
export function overflowThenMake(dir: string, last: (dir: string) => void, files = 20_000): void {
  const made = spawnSync(
    process.execPath,
    [
      '-e',
      `const fs = require('node:fs');
       const [dir, n] = [process.argv[1], Number(process.argv[2])];
       for (let i = 0; i < n; i++) fs.writeFileSync(dir + '/overflow-' + i, '');`,
      dir,
      String(files),
    ],
    { stdio: 'ignore' },
  );
  if (made.status !== 0) throw new Error(`the files were not made (status ${made.status})`);
  // Still in the same turn of this process's loop: nothing has read the queue yet.
  last(dir);
}

/** What `slowWatch`'s listener spends on each event. */
const SLOW_EVENT_MS = 0.1;

/**
 * A watch of `dir` in this process whose listener takes `SLOW_EVENT_MS` per event, as a loaded
 * machine's would, and obeys the flood guard as every watch of the project does. Every event in
 * `dir` is read for it too: with it, a flood outruns the listeners even when the flooding
 * processes get little of the CPU (other tests running beside), and the guard is what lets the
 * loop go on.
 */
export function slowWatch(t: Test, dir: string): void {
  const w = guardedWatch(
    dir,
    { persistent: false },
    () => {
      const end = performance.now() + SLOW_EVENT_MS;
      while (performance.now() < end) {
        // the listener's time
      }
    },
    () => {},
  );
  t.teardown(() => w.close());
}
