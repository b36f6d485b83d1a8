/**
 * A roots list as the JSON the daemon sends, made from runs of roots encoded before. Lists that
 * follow each other share most root objects (a snapshot updated by a delta keeps every root it
 * did not add), so a list is cut into runs at roots chosen by their URI alone: a root added or
 * removed changes the run it falls in, and every other run is found again by its first root and
 * joined as it was. A 100,000-root list after one new directory encodes one run, not 100,000
 * roots. The text is the same as `JSON.stringify(roots)` would give.
 */
import type { Root } from '../common/types.js';

/** About one root in 2^(32 - RUN_SHIFT) = 64 ends a run; no run is longer than MAX_RUN. */
const RUN_SHIFT = 26;
const MAX_RUN = 1024;

interface Run {
  roots: Root[];
  json: string;
}

export class ListJson {
  /** Each run by its first root (runs go when their roots do). */
  private readonly runs = new WeakMap<Root, Run>();
  /** Each list's whole text. */
  private readonly lists = new WeakMap<Root[], string>();

  /** The JSON text of `roots`, made once per list. */
  of(roots: Root[]): string {
    let json = this.lists.get(roots);
    if (json !== undefined) return json;
    // Concatenated, not joined: V8 keeps the pieces and copies them once, when the text is
    // written out; `Array.prototype.join` of a few MB copies them here, for tens of ms.
    json = '[';
    let i = 0;
    while (i < roots.length) {
      const run = this.runAt(roots, i);
      json += i === 0 ? run.json : `,${run.json}`;
      i += run.roots.length;
    }
    json += ']';
    this.lists.set(roots, json);
    return json;
  }

  /** The run starting at `roots[i]`: the one kept, if it is still whole there, else a new one. */
  private runAt(roots: Root[], i: number): Run {
    const kept = this.runs.get(roots[i]!);
    if (kept !== undefined && i + kept.roots.length <= roots.length) {
      let same = true;
      for (let k = 1; k < kept.roots.length && same; k++) same = kept.roots[k] === roots[i + k];
      if (same) return kept;
    }
    let end = i + 1;
    while (end < roots.length && end - i < MAX_RUN && !endsRun(roots[end - 1]!)) end++;
    const members = roots.slice(i, end);
    let text = JSON.stringify(members[0]);
    for (let k = 1; k < members.length; k++) text += `,${JSON.stringify(members[k])}`;
    const run = { roots: members, json: text };
    this.runs.set(roots[i]!, run);
    return run;
  }
}

/** Whether a run ends after this root: a hash of its URI's last characters, so lists realign. */
function endsRun(root: Root): boolean {
  const uri = root.uri;
  let h = uri.length;
  for (let k = Math.max(0, uri.length - 12); k < uri.length; k++)
    h = (Math.imul(h, 31) + uri.charCodeAt(k)) | 0;
  // The top bits of a multiplicative hash: one root in 2^(32-26) = 64.
  return Math.imul(h, 0x9e3779b1) >>> RUN_SHIFT === 0;
}
