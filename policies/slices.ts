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
