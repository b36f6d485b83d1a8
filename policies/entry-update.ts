/**
 * An entry's expansion brought up to date after directory changes, doing only the work the
 * changes call for: an entry whose watched directories saw no change is reused whole, a glob
 * whose base saw changes walks only the changed subtrees again (glob-update.ts), anything else
 * is expanded again. The result is the one `expandEntry` would give now.
 */
import { constants } from 'node:fs';
import { isGlob } from './expand.js';
import {
  expandEntry,
  fromGlob,
  newExpansionId,
  type AnchorOf,
  type Candidate,
  type Expansion,
} from './entry.js';
import { globShape } from './glob.js';
import { updateGlob, type GlobUpdate } from './glob-update.js';
import { accessAll } from './fs.js';
import type { PolicyContext } from './model.js';
import { isInsideOrEqual, isStrictlyInside } from './paths.js';
import { nextTurn, SLICE } from './slices.js';

export async function updateEntry(
  fs: PolicyContext['fs'],
  abs: string,
  kind: 'directory' | 'file' | 'any',
  anchor: AnchorOf,
  old: Expansion | undefined,
  changed: string[],
): Promise<Expansion> {
  if (old === undefined) return expandEntry(fs, abs, kind, anchor);
  // Where the written path leads is asked every time (so its pin stays in use), and a link
  // appearing on it changes everything the entry yields.
  let anchors = JSON.stringify(await anchor(abs));
  const glob = !old.literal && isGlob(abs);
  const shape = glob ? globShape(abs) : undefined;
  if (shape) anchors += JSON.stringify(await anchor(shape.base));
  if (anchors !== old.anchors) return expandEntry(fs, abs, kind, anchor);
  const watched = old.watch.recursive?.path ?? old.watch.dir?.path;
  const touched =
    watched === undefined
      ? changed
      : changed.filter((p) => isInsideOrEqual(p, watched) || isStrictlyInside(watched, p));
  const walked = old.walked;
  if (touched.length === 0) {
    // A change outside the tree can still move where a link in it leads: a link on the way to
    // its target (removed, re-pointed, or followed through a pin). A glob walked from its
    // watched base judges its links again, as a full walk would, and walks nothing else.
    const links = walked?.result.links.length ?? 0;
    if (links === 0 || !shape || watched !== shape.base) return old;
  }
  // A name spelled like the glob itself, created on the way to it, makes the path a literal one.
  if (touched.some((p) => isInsideOrEqual(abs, p))) return expandEntry(fs, abs, kind, anchor);
  // Only an existing base watched as such can be walked in part; the rest is cheap to redo.
  if (!shape || !walked || watched !== shape.base) return expandEntry(fs, abs, kind, anchor);
  if (touched.some((p) => !isStrictlyInside(p, shape.base)))
    return expandEntry(fs, abs, kind, anchor);
  const canonical = touched.map((p) => walked.canonicalBase + p.slice(shape.base.length));
  const u = await updateGlob(fs, abs, kind, walked.canonicalBase, walked.result, canonical);
  if (u === undefined) return expandEntry(fs, abs, kind, anchor);
  const g = u.result;
  const x: Expansion = {
    id: newExpansionId(),
    literal: false,
    candidates: [],
    notes: [],
    watch: old.watch,
    anchors,
    walked: { canonicalBase: walked.canonicalBase, result: g },
    notReadable: new Set(),
  };
  return updated(fs, x, old, u);
}

/**
 * Fill `x` from an update's walk as `fromGlob` would from a full one, in time proportional to
 * what the update looked at again. The matches it kept (no link, outside the changed subtrees)
 * were judged by the last expansion: readable unless it found them not. The rest (what the
 * changed subtrees hold now, every matched link) are asked of the filesystem, and they alone
 * make the delta: the earlier candidates among `dropped` against the new ones among them.
 */
async function updated(
  fs: PolicyContext['fs'],
  x: Expansion,
  old: Expansion,
  u: GlobUpdate,
): Promise<Expansion> {
  const g = u.result;
  if (g.matches.length === 0) return fromGlob(fs, x, g, () => undefined);
  for (const n of g.unreadable) x.notes.push(`cannot read ${n.path} (${n.code}); skipped`);
  for (const o of g.outsideBase)
    x.notes.push(`${o} is a symlink that leads outside what the glob matches; not granted`);
  for (const o of g.unwatchedWay)
    x.notes.push(
      `${o} is a symlink that leads through a path outside what the daemon watches for this glob (it could be re-pointed unseen); not granted`,
    );
  for (const n of g.notUtf8) x.notes.push(`${n} is not valid UTF-8 and cannot be a URI; skipped`);
  const notReadable = (c: Candidate) => {
    x.notReadable.add(c.canonical);
    x.notes.push(`${c.canonical} is not readable; not granted`);
  };
  const asked = g.matches.slice(u.kept);
  const answers = await accessAll(
    fs,
    asked.map((c) => c.canonical),
    constants.R_OK,
  );
  // Every match readable (the usual case): the candidates are the matches, in their order
  // (the kept ones, then the ones asked), with no copy of either.
  const whole = old.notReadable.size === 0 && answers.every((a) => a);
  if (whole) x.candidates = g.matches;
  else {
    // A slice at a time: the daemon's other answers wait on the same event loop.
    for (let i = 0; i < u.kept; i++) {
      if (i > 0 && i % SLICE === 0) await nextTurn();
      const c = g.matches[i]!;
      if (old.notReadable.has(c.canonical)) notReadable(c);
      else x.candidates.push(c);
    }
  }
  const added: Candidate[] = [];
  asked.forEach((c, i) => {
    if (!answers[i]) return notReadable(c);
    if (!whole) x.candidates.push(c);
    added.push(c);
  });
  if (x.candidates.length === 0) x.reason = 'not-readable';
  // The earlier candidates looked at again: the dropped matches the last expansion found readable.
  const before = u.dropped.filter((c) => !old.notReadable.has(c.canonical));
  const had = new Set(before.map(candidateKey));
  const has = new Set(added.map(candidateKey));
  x.delta = {
    from: old,
    added: added.filter((c) => !had.has(candidateKey(c))),
    removed: before.filter((c) => !has.has(candidateKey(c))),
  };
  return x;
}

/**
 * `x`, expanded afresh, with what it added to and removed from `old` (the same path's expansion
 * in the resolution before), so that the lists built from it are updated, not rebuilt. An
 * expansion that changed from a literal path to a glob or back is left without: its entries'
 * names are made differently.
 */
export async function sinceEarlier(x: Expansion, old: Expansion | undefined): Promise<Expansion> {
  if (old === undefined || x === old || x.delta !== undefined || x.literal !== old.literal)
    return x;
  // Compared a slice at a time: 100,000 candidates in one go hold every answer for 0.2 s.
  const had = await keysOf(old.candidates);
  const has = await keysOf(x.candidates);
  x.delta = {
    from: old,
    added: x.candidates.filter((c) => !had.has(candidateKey(c))),
    removed: old.candidates.filter((c) => !has.has(candidateKey(c))),
  };
  return x;
}

async function keysOf(list: Candidate[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (let i = 0; i < list.length; i++) {
    if (i > 0 && i % SLICE === 0) await nextTurn();
    out.add(candidateKey(list[i]!));
  }
  return out;
}

/** A candidate's identity; a plain match's path is its canonical path, and is the key itself. */
function candidateKey(c: Candidate): string {
  return c.path === c.canonical ? c.path : `${c.path}\0${c.canonical}`;
}
