/**
 * What the schema accepts of a policy file it refused: the same data with each refused part taken
 * out, so that the checks after the schema (variables and `~` in paths, includes, missing and
 * expired roots) can still report on the rest. Without it, `rootsctl validate` showed a policy's
 * problems in rounds: the unknown keys first, then, once those were fixed, an unset variable,
 * then an expired root, each round's count looking final.
 *
 * Only for reporting. A refused file is never served, salvaged or not (policies/load.ts keeps
 * these apart from the files a policy is made of).
 */
import type { ErrorObject } from 'ajv';
import { isObject } from '../common/is-object.js';
import { MAX_ERRORS } from './error-list.js';
import { pointerParts } from './schema-errors.js';
import type { Segment } from './yaml-locate.js';

/**
 * The lists whose items are taken out one by one, leaving a hole (`undefined`) so that the items
 * after it keep their index, and with it their place in the file (`Locator` finds a value by the
 * path of keys and indexes to it). Anything else refused is taken out at the nearest key above it.
 */
const HOLED_LISTS = new Set(['roots', 'deny', 'include']);

/**
 * Rounds of taking out and validating again. Each takes out the deepest refused parts, so the
 * schema's nesting (a value in a rule in a list in a server) bounds what a file needs.
 */
const MAX_ROUNDS = 8;

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * `data` with every part the schema refuses taken out, or undefined when what is left is not a
 * policy (the refusal is of the whole file, or of `version`). `data` is not changed. Items taken
 * out of roots, deny and include lists are holes (`undefined`), which the model's builder skips.
 */
export function salvage(data: unknown, validate: Validate): unknown {
  const holed: unknown = structuredClone(data);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const packed = withoutHoles(holed);
    if (validate(packed)) return holed;
    const errors = validate.errors ?? [];
    // Past the errors a file reports, the report says "fix the ones above first": nothing more to
    // find, and each error costs a walk of its list here.
    if (errors.length > MAX_ERRORS) return undefined;
    const targets = errors.map((e) => target(e, holed));
    if (targets.some((t) => t === undefined || t.length === 0)) return undefined;
    // The deepest only: a part whose own parts are refused may pass once they are out.
    const deepest = (targets as Segment[][]).filter(
      (t) => !targets.some((o) => o !== t && o!.length > t.length && startsWith(o!, t)),
    );
    for (const t of deepest) takeOut(holed, t);
  }
  return undefined;
}

/** A copy of `data` with the holes left out of every list, as the schema reads it. */
function withoutHoles(data: unknown): unknown {
  if (Array.isArray(data)) return data.filter((v) => v !== undefined).map(withoutHoles);
  if (isObject(data)) {
    return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, withoutHoles(v)]));
  }
  return data;
}

/**
 * Where in the holed data to take out for one error: its instance path read back through the
 * holes (index k of a list the schema saw is the k-th item still there), then cut back to a key,
 * or to an item of a holed list.
 */
function target(error: ErrorObject, holed: unknown): Segment[] | undefined {
  const parts = pointerParts(error.instancePath);
  // An unknown key goes alone (its name as written, not a pointer's escape); a part missing a key
  // it needs goes whole (its path is its own).
  if (error.keyword === 'additionalProperties') {
    parts.push(String((error.params as { additionalProperty: string }).additionalProperty));
  }
  const segs: Segment[] = [];
  let cur: unknown = holed;
  for (const part of parts) {
    if (Array.isArray(cur)) {
      const index = presentIndex(cur, Number(part));
      if (index === undefined) return undefined;
      segs.push(index);
      cur = cur[index];
    } else if (isObject(cur)) {
      segs.push(part);
      cur = cur[part];
    } else {
      return undefined;
    }
  }
  while (segs.length > 0) {
    const last = segs[segs.length - 1];
    const parent = segs[segs.length - 2];
    if (typeof last === 'string') return segs;
    if (typeof parent === 'string' && HOLED_LISTS.has(parent)) return segs;
    segs.pop();
  }
  return segs;
}

/** The index in `list` of its k-th item that is not a hole. */
function presentIndex(list: unknown[], k: number): number | undefined {
  let seen = -1;
  for (let i = 0; i < list.length; i++) {
    if (list[i] !== undefined && ++seen === k) return i;
  }
  return undefined;
}

function startsWith(path: readonly Segment[], prefix: readonly Segment[]): boolean {
  return prefix.every((s, i) => path[i] === s);
}

/** Take out the part at `segs`: a hole in a list, a key gone from a mapping. */
function takeOut(holed: unknown, segs: readonly Segment[]): void {
  let cur: unknown = holed;
  for (const s of segs.slice(0, -1)) {
    cur = Array.isArray(cur) ? cur[s as number] : isObject(cur) ? cur[s as string] : undefined;
  }
  const last = segs[segs.length - 1]!;
  if (Array.isArray(cur)) cur[last as number] = undefined;
  else if (isObject(cur)) delete cur[last as string];
}
