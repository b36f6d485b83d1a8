/**
 * An update's default matches (each candidate named by its base name, shared by every entry
 * that gives no name of its own) patched from the earlier expansion's, by what the update added
 * and removed: no new object for a match that stayed, and one new array copied a slice at a time,
 * so a list of 100,000 matches does not hold the daemon's other answers.
 */
import { basename } from 'node:path';
import type { Expansion } from './entry.js';
import { nextTurn, SLICE, without } from './slices.js';

/**
 * Set `x.defaultMatches` from the earlier expansion's when `x` is an update of it; left unset
 * when it cannot be patched (the entry then names each candidate afresh). Their order does not
 * matter: a view sorts its roots.
 */
export async function patchDefaults(x: Expansion): Promise<Expansion> {
  const d = x.delta;
  const before = d?.from.defaultMatches;
  if (!d || !before || x.defaultMatches !== undefined) return x;
  const key = (canonical: string, name: string) => `${canonical}\0${name}`;
  // How many of each (canonical, name) to take out: a link and its target may share both.
  const gone = new Map<string, number>();
  const goneCanonical = new Set<string>();
  for (const c of d.removed) {
    const k = key(c.canonical, basename(c.path));
    gone.set(k, (gone.get(k) ?? 0) + 1);
    goneCanonical.add(c.canonical);
  }
  // The earlier list without the names of what went (found by a pass only when something went:
  // a creation takes nothing out), then the new names: one array, made once (slices.ts).
  const out: number[] = [];
  for (let i = 0; goneCanonical.size > 0 && i < before.length; i++) {
    if (i > 0 && i % SLICE === 0) await nextTurn();
    const m = before[i]!;
    if (goneCanonical.has(m.canonical)) {
      const k = key(m.canonical, m.name);
      const n = gone.get(k) ?? 0;
      if (n > 0) {
        gone.set(k, n - 1);
        out.push(i);
      }
    }
  }
  if ([...gone.values()].some((n) => n !== 0)) return x;
  const added = d.added.map((c) => ({ canonical: c.canonical, name: basename(c.path) }));
  if (before.length - out.length + added.length !== x.candidates.length) return x;
  x.defaultMatches = await without(before, out, added);
  return x;
}
