/**
 * From `mkdir` of a directory matching a glob to the subscriber's list_changed, p50 and p99 over
 * 200 tries, beside the raw OS event (fs.watch) for the same mkdir (the floor). Directory events
 * act on the leading edge, so the settle window (kept for policy files) is not in the path.
 * Targets: `dir/*` p50 <= 5 ms, `dir/**\/x` p50 <= 15 ms. Runs the built daemon as a child process.
 */
import { watch, mkdirSync, rmdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { RootsClient } from '../protocol/client.js';
import type { ListChangedParams } from '../protocol/methods.js';
import { report, startDaemon, summary, tempDir } from './common.js';
import { watchmanAvailable, watchmanSubscribe, type WatchmanPeer } from './watchman-peer.js';

const TRIES = Number(process.env.TRIES ?? 200);
const SETTLE_MS = 50;
/** Between tries: past the settle window and the root's recompute gap, even on a loaded machine. */
const PAUSE_MS = SETTLE_MS + 100;

const dir = realpathSync(tempDir());
const socket = join(dir, 'rootsd.sock');
const config = join(dir, 'mcp-roots.yaml');
mkdirSync(join(dir, 'g'));
mkdirSync(join(dir, 'r'));
writeFileSync(
  config,
  `version: 1\nservers:\n  bench:\n    roots:\n      - path: ${dir}/g/*\n      - path: ${dir}/r/**/x\n`,
);
const env = { ...process.env, HOME: dir };
const daemon = await startDaemon(
  { config, socket, stateDir: join(dir, 'state'), extra: ['--settle-ms', String(SETTLE_MS)] },
  env,
);

/** Wait for the first notification whose list satisfies `pred`. */
function listChanged(
  c: RootsClient,
  pred: (uris: string[]) => boolean,
  what: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      c.off('list_changed', on);
      reject(new Error(`no list_changed within 5 s after ${what}`));
    }, 5000);
    const on = (p: ListChangedParams) => {
      if (!pred(p.roots.map((r) => r.uri))) return;
      clearTimeout(timer);
      c.off('list_changed', on);
      resolve(performance.now());
    };
    c.on('list_changed', on);
  });
}

/** One scenario: create `path(i)` (the matching directory) under the watched `parent`, then remove it. */
async function measure(
  c: RootsClient,
  tries: number,
  parent: string,
  make: (i: number) => { create: () => void; remove: () => void; match: string; rawName: string },
) {
  const daemonMs: number[] = [];
  const rawMs: number[] = [];
  const peerMs: number[] = [];
  // watchman, when installed, on the same mkdirs (its names are relative to the watched directory).
  const peer: WatchmanPeer | undefined = withWatchman ? await watchmanSubscribe(parent) : undefined;
  let rawAt: { name: string; at: number } | undefined;
  const raw = watch(parent, (_event, name) => {
    if (rawAt === undefined && name !== null) rawAt = { name, at: performance.now() };
  });
  try {
    for (let i = 0; i < tries; i++) {
      const step = make(i);
      const uri = pathToFileURL(step.match).href;
      const added = listChanged(c, (u) => u.includes(uri), `creating ${step.match}`);
      rawAt = undefined;
      const seen = peer?.next(step.match.slice(parent.length + 1));
      const t0 = performance.now();
      step.create();
      const t1 = await added;
      daemonMs.push(t1 - t0);
      if (seen) peerMs.push((await seen) - t0);
      if (rawAt !== undefined && (rawAt as { name: string }).name === step.rawName) {
        rawMs.push((rawAt as { at: number }).at - t0);
      }
      const removed = listChanged(c, (u) => !u.includes(uri), `removing ${step.match}`);
      step.remove();
      await removed;
      // Each try is a leading edge: a server's notifications are at most one per settle window,
      // and a root's recomputes one per gap (twice the last one's time; the removal's is a full
      // look), so the next mkdir waits until both have passed.
      await new Promise((r) => setTimeout(r, PAUSE_MS));
    }
  } finally {
    raw.close();
    peer?.close();
  }
  return {
    daemon: summary(daemonMs),
    raw: summary(rawMs),
    peer: peer ? summary(peerMs) : undefined,
  };
}

const withWatchman = watchmanAvailable();
/** Ours must be at least this many times faster than watchman's subscription at p50. */
const WATCHMAN_FACTOR = 4;

let ok: boolean;
try {
  const c = await RootsClient.connect({
    socket,
    env,
    clientInfo: { name: 'bench', version: '0' },
  });
  await c.listRoots('bench', { subscribe: true });
  const glob = await measure(c, TRIES, join(dir, 'g'), (i) => ({
    create: () => mkdirSync(join(dir, 'g', `d${i}`)),
    remove: () => rmdirSync(join(dir, 'g', `d${i}`)),
    match: join(dir, 'g', `d${i}`),
    rawName: `d${i}`,
  }));
  const recursiveTries = Math.min(TRIES, 50);
  const deep = await measure(c, recursiveTries, join(dir, 'r'), (i) => ({
    create: () => mkdirSync(join(dir, 'r', `a${i}`, 'x'), { recursive: true }),
    remove: () => rmSync(join(dir, 'r', `a${i}`), { recursive: true }),
    match: join(dir, 'r', `a${i}`, 'x'),
    rawName: `a${i}`,
  }));
  await c.close();
  const GLOB_TARGET_MS = 5;
  const RECURSIVE_TARGET_MS = 15;
  ok = report(
    'watch-latency',
    {
      settleMs: SETTLE_MS,
      tries: TRIES,
      globMs: glob.daemon,
      rawFsWatchMs: glob.raw,
      recursiveTries,
      recursiveMs: deep.daemon,
      recursiveRawFsWatchMs: deep.raw,
      watchmanMs: glob.peer ?? 'watchman not on PATH',
      recursiveWatchmanMs: deep.peer ?? 'watchman not on PATH',
    },
    [
      ...[glob, deep].flatMap(({ daemon: d, peer: w }, i) =>
        w
          ? [
              [
                `${i === 0 ? 'dir/*' : 'dir/**/x'} p50 ${d.p50} ms at least ${WATCHMAN_FACTOR}x faster than watchman's subscription p50 ${w.p50} ms (ratio ${(w.p50 / d.p50).toFixed(1)})`,
                d.p50 * WATCHMAN_FACTOR <= w.p50,
              ] as [string, boolean],
            ]
          : [],
      ),
      [
        `dir/* mkdir -> list_changed p50 ${glob.daemon.p50} ms (p99 ${glob.daemon.p99} ms; raw fs.watch p50 ${glob.raw.p50} ms) <= ${GLOB_TARGET_MS} ms`,
        glob.daemon.p50 <= GLOB_TARGET_MS,
      ],
      [
        `dir/**/x mkdir -> list_changed p50 ${deep.daemon.p50} ms (p99 ${deep.daemon.p99} ms; raw fs.watch p50 ${deep.raw.p50} ms) <= ${RECURSIVE_TARGET_MS} ms`,
        deep.daemon.p50 <= RECURSIVE_TARGET_MS,
      ],
    ],
  );
} finally {
  daemon.kill('SIGTERM');
  await new Promise((r) => daemon.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = ok ? 0 : 1;
