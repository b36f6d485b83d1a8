/**
 * A daemon watching, seen from a subscribed client: a policy giving server `fs` its roots, and
 * waits that prove a notification came, or that no further one is coming (the sentinel).
 */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Test } from 'tap';
import { grantsFile } from '../../common/locations.js';
import type { ListChangedParams } from '../../protocol/methods.js';
import type { RootsClient } from '../../protocol/client.js';
import { nextEvent, startDaemon, type TestDaemon } from './daemon.js';
import { waitFor } from './poll.js';

/** Only a ceiling for waits on an event: on a loaded 2-core machine a watch has taken over 5 s. */
export const WAIT_MS = 30_000;

export const uri = (path: string) => pathToFileURL(realpathSync(path)).href;
export const uris = (ev: ListChangedParams | { roots: { uri: string }[] }) =>
  ev.roots.map((r) => r.uri);

/** A policy giving server `fs` the listed roots (plain paths, globs, or `{path, expires}` objects). */
export function policy(roots: (string | { path: string; expires: string })[], head = ''): string {
  if (roots.length === 0) return `version: 1\n${head}servers:\n  fs:\n    roots: []\n`;
  const lines = roots.map((r) =>
    typeof r === 'string'
      ? `      - path: "${r}"\n`
      : `      - path: "${r.path}"\n        expires: "${r.expires}"\n`,
  );
  return `version: 1\n${head}servers:\n  fs:\n    roots:\n${lines.join('')}`;
}

/** The daemon each subscribed client of `setup` talks to, for the sentinel below. */
const daemonOf = new WeakMap<RootsClient, TestDaemon>();

/** Start a daemon and a client subscribed to `fs`; `dirs` are created first. */
export async function setup(
  t: Test,
  dirs: string[],
  yaml: (dir: string) => string | undefined,
  overrides = {},
) {
  const d = await startDaemon(t, undefined, overrides);
  // The sentinel's root, and the directory of the grants file it writes, exist from the start,
  // so that neither changes what the daemon watches during the test.
  for (const dir of [...dirs, SENTINEL, 'state']) mkdirSync(join(d.dir, dir), { recursive: true });
  const text = yaml(d.dir);
  if (text !== undefined) {
    d.writePolicy(text);
    const c0 = await d.connect('setup');
    await c0.reload();
  }
  const c = await d.connect();
  daemonOf.set(c, d);
  const first = await c.listRoots('fs', { subscribe: true });
  return { d, c, first };
}

const SENTINEL = 'sentinel';
/** How many log lines each daemon had when its last sentinel began. */
const sentinelAt = new WeakMap<TestDaemon, number>();

/**
 * Prove that nothing more is coming, without waiting a guessed while: make a change of our own
 * through the same path as a policy edit (a hand edit of the grants file, which the watcher
 * reloads like any policy file), and wait for its notification, then undo it the same way. The
 * watcher applies what it saw one batch after another, so a notification that the change before
 * still had in store arrives before the sentinel's; and the sentinel's list must be the list
 * before it plus the sentinel's root, or something else changed with it. Returns the
 * notifications that came before the sentinel's.
 */
async function beforeSentinel(
  c: RootsClient,
  seen: ListChangedParams[],
): Promise<ListChangedParams[]> {
  const d = daemonOf.get(c);
  if (!d) throw new Error('the sentinel needs a client from setup()');
  sentinelAt.set(d, d.logs.length);
  const mark = uri(join(d.dir, SENTINEL));
  const before = uris(await c.listRoots('fs'));
  const file = grantsFile(d.stateDir);
  const marked = waitForList(c, (u) => u.includes(mark));
  writeFileSync(
    file,
    `version: 1\nservers:\n  fs:\n    roots:\n      - {path: "${join(d.dir, SENTINEL)}", expires: ${new Date(Date.now() + 86400_000).toISOString()}}\n`,
  );
  const withMark = await marked;
  const unmarked = waitForList(c, (u) => !u.includes(mark));
  writeFileSync(file, 'version: 1\n');
  await unmarked;
  const at = seen.indexOf(withMark);
  const earlier = seen.slice(0, at);
  const expected = [...(earlier.length > 0 ? uris(earlier[earlier.length - 1]!) : before), mark];
  if (uris(withMark).sort().join() !== expected.sort().join()) {
    throw new Error(
      `the sentinel's notification carried another change: ${uris(withMark).join()} (expected ${expected.join()})`,
    );
  }
  return earlier;
}

/** Run `action`, expect one notification, then prove no second one came (see beforeSentinel). */
export async function exactlyOne(c: RootsClient, action: () => void): Promise<ListChangedParams[]> {
  const seen: ListChangedParams[] = [];
  const on = (p: ListChangedParams) => seen.push(p);
  c.on('list_changed', on);
  try {
    const first = nextEvent<ListChangedParams>(c, 'list_changed', WAIT_MS);
    action();
    await first;
    return await beforeSentinel(c, seen);
  } finally {
    c.off('list_changed', on);
  }
}

/** Resolve with the first notification whose list satisfies `pred`. */
export function waitForList(
  c: RootsClient,
  pred: (uris: string[]) => boolean,
  ms = WAIT_MS,
): Promise<ListChangedParams> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      c.off('list_changed', on);
      reject(new Error(`no matching list_changed within ${ms} ms`));
    }, ms);
    const on = (p: ListChangedParams) => {
      if (!pred(uris(p))) return;
      clearTimeout(timer);
      c.off('list_changed', on);
      resolve(p);
    };
    c.on('list_changed', on);
  });
}

/**
 * Poll a condition (a state the daemon reaches, not a guess at timing) until true or `ms`. The
 * limit is only a ceiling: on a loaded 2-core machine setting the first watches has taken over 5 s.
 */
export async function until(what: string, cond: () => boolean | Promise<boolean>, ms = WAIT_MS) {
  await waitFor(cond, ms, what);
}

/** Count the notifications `action` causes, up to the sentinel's (see beforeSentinel). */
export async function none(c: RootsClient, action: () => void | Promise<void>): Promise<number> {
  const seen: ListChangedParams[] = [];
  const on = (p: ListChangedParams) => seen.push(p);
  c.on('list_changed', on);
  try {
    await action();
    return (await beforeSentinel(c, seen)).length;
  } finally {
    c.off('list_changed', on);
  }
}

export const logCount = (d: TestDaemon, text: string) =>
  d.logs.filter((l) => l.includes(text)).length;
/** Like logCount, over the lines logged before the last sentinel (whose own reloads are logged). */
export const logCountBeforeSentinel = (d: TestDaemon, text: string) =>
  d.logs.slice(0, sentinelAt.get(d)).filter((l) => l.includes(text)).length;
