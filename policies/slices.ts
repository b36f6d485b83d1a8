/**
 * Long passes over a large list (a glob's 100,000 matches, a view's roots) are cut into slices
 * with the event loop turning between them: the daemon answers every other client's checks on
 * the same loop, and one pass of 100,000 items in one turn holds them all for tens of ms.
 */

/** How many items a pass handles between two turns of the event loop. */
export const SLICE = 2048;

/** Let the event loop turn (I/O, timers: other clients' answers) before the work goes on. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Run a generator's steps to the end, letting the event loop turn at each `yield`. */
export async function runSliced<T>(steps: Generator<void, T>): Promise<T> {
  let step = steps.next();
  while (!step.done) {
    await nextTurn();
    step = steps.next();
  }
  return step.value;
}

/** Run a generator's steps to the end in one go (where the answer is needed now). */
export function runAtOnce<T>(steps: Generator<void, T>): T {
  let step = steps.next();
  while (!step.done) step = steps.next();
  return step.value;
}

/**
 * `list` without the items at `at` (ascending indexes), then `extra`, in order, in one new array
 * made at its final size with room for `spare` more pushes. A list of more than about 16,000
 * items is a large object to V8, mapped fresh and faulted in page by page on its first touch:
 * copying 30,000 pointers cost 2-14 ms here, each growth of an array pushed to a copy more, so a
 * recompute makes each such list once, never grows it, and copies it a slice at a time.
 */
export async function without<T>(
  list: readonly T[],
  at: readonly number[],
  extra: readonly T[] = [],
  spare = 0,
): Promise<T[]> {
  const n = list.length - at.length + extra.length;
  const out = new Array<T>(n + spare);
  let w = 0;
  let k = 0;
  for (let i = 0; i < list.length; i++) {
    if (i > 0 && i % SLICE === 0) await nextTurn();
    if (k < at.length && at[k] === i) k++;
    else out[w++] = list[i]!;
  }
  for (const x of extra) out[w++] = x;
  // Shorter by `spare`: V8 keeps the room (less than half of it goes), so pushes do not copy.
  out.length = n;
  return out;
}
