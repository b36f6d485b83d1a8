/**
 * A watch whose events come faster than they can be handled is closed, so that the event loop
 * goes on: in the daemon (its watches of roots and policy files) and in the proxy (a sandboxed
 * server's roots, watched for denied paths and include bases).
 *
 * libuv reads inotify's queue until the queue is empty (`uv__inotify_read`), calling every
 * `fs.watch` listener on the way, before the loop does anything else. A process changing a
 * watched directory in a loop (a link re-pointed by rename, over and over: any agent may do it
 * in its own roots) queues events faster than one listener call handles each, so that read
 * never ended. The daemon answered nothing for as long as the loop ran: every server's checks
 * waited, and so did `rootsctl lockdown`. A proxy read no event behind the flood, a denied path
 * made meanwhile included.
 *
 * So each watch's listener asks `flooded()` first (`guardedWatch` does it for an `fs.watch`).
 * Once one turn of the loop has brought `FLOOD_EVENTS` watch events and lasted `FLOOD_TURN_MS`,
 * every listener called in the rest of that turn closes its watch (the kernel stops queueing
 * for it, the read ends). The daemon's watcher then rescans what the watch covered on the
 * degraded interval and sets the watch again at each rescan, as for a watch the kernel refused
 * (watcher.ts `degrade`). The proxy stops the server, as for a denied path appearing, and its
 * next plan watches everything afresh (deny-watch.ts, include-watch.ts). Both conditions,
 * because either alone is ordinary: a turn of a loaded machine lasts a while with a few events
 * and a slow recompute in it, and `rm -rf` of a directory brings thousands of events. A burst
 * of tens of thousands under a `**` glob (whose tree watch does more for each event) may still
 * take longer than `FLOOD_TURN_MS`: it is then rescanned for a few seconds as for a flood,
 * which costs latency, not correctness (5,000 files made or removed there did, about half the
 * time, at 100 ms).
 *
 * A turn that brings as many events as the kernel queues for one inotify instance
 * (`fs.inotify.max_queued_events`) counts too, however fast it went: the queue may have
 * overflowed while the loop was busy elsewhere, and libuv drops the kernel's overflow notice
 * without a word (it names no watch), so the events lost after it were never known.
 *
 * The count stands for the queue only while no watch is closed with events still queued for it:
 * libuv drops those too, uncounted (no handle is left to call), so a queue filled with them
 * overflows unseen; closing a watch queues one such event itself (IN_IGNORED). The proxy's deny
 * watch therefore keeps a watch it gives up open, its events counted and ignored, until a walk of
 * the roots has followed (proxy/deny-watch.ts, `retired`), and a full queue short of `UNSEEN`
 * events counts as full.
 */
import { readFileSync, watch, type FSWatcher, type WatchEventType } from 'node:fs';

/** How long a turn of the event loop with `FLOOD_EVENTS` watch events in it may last. */
export const FLOOD_TURN_MS = 250;
export const FLOOD_EVENTS = 1000;

/**
 * Events of a full queue that may have reached no listener: a watch closed while one was queued
 * for it (its IN_IGNORED at least; the proxy's deny watch retires rather than closes, but the
 * daemon's watchers close). A queue full but for these counts as full: short by one, a full queue
 * went unseen (an attacker pass).
 */
const UNSEEN = 256;

/** The kernel's queue length per inotify instance (Node has one per process). */
const QUEUED_MAX = queuedMax();

/** When the current turn's first watch event arrived; undefined between turns. */
let turnStart: number | undefined;
/** Watch events in the current turn. */
let turnEvents = 0;

/** Whether this turn has spent its time on watch events: the caller closes its watch. */
export function flooded(): boolean {
  const now = performance.now();
  if (turnStart === undefined) {
    turnStart = now;
    turnEvents = 1;
    // Runs once the loop gets past its poll phase, which is what a flood prevents.
    setImmediate(() => {
      turnStart = undefined;
    });
    return false;
  }
  turnEvents++;
  return (
    turnEvents >= QUEUED_MAX - UNSEEN ||
    (turnEvents > FLOOD_EVENTS && now - turnStart > FLOOD_TURN_MS)
  );
}

/** `fs.inotify.max_queued_events`, or the kernel's default where it cannot be read. */
function queuedMax(): number {
  try {
    const n = Number.parseInt(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'), 10);
    if (Number.isSafeInteger(n) && n > 0) return n;
  } catch {
    // no /proc: the default
  }
  return 16_384;
}

/** A watch closed because its events came faster than they could be handled. */
export class WatchFlood extends Error {
  readonly code = 'FLOOD';
  constructor(path: string) {
    super(`events for ${path} came faster than they could be handled; the watch was closed`);
    this.name = 'WatchFlood';
  }
}

/**
 * `fs.watch` whose listener runs only while the turn is not flooded: on a flood the watch is
 * closed, in the listener's own turn, and `onFlood` says what that means to its owner.
 */
export function guardedWatch(
  path: string,
  options: { persistent: boolean; encoding: 'buffer' },
  listener: (event: WatchEventType, name: Buffer | null) => void,
  onFlood: () => void,
): FSWatcher;
export function guardedWatch(
  path: string,
  options: { persistent: boolean },
  listener: (event: WatchEventType, name: string | null) => void,
  onFlood: () => void,
): FSWatcher;
export function guardedWatch(
  path: string,
  options: { persistent: boolean; encoding?: 'buffer' },
  listener: (event: WatchEventType, name: never) => void,
  onFlood: () => void,
): FSWatcher {
  const w = watch(path, options, (event, name) => {
    if (flooded()) {
      w.close();
      onFlood();
      return;
    }
    listener(event, name as never);
  });
  return w;
}
