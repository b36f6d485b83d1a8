/** The one poll-until helper: wait on a state the code under test reaches, never on a fixed delay. */

const STEP_MS = 20;

/** Check `cond` every 20 ms until it holds (true) or `ms` have passed (false). */
export async function poll(cond: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, STEP_MS));
  }
}

/**
 * Wait until `cond` holds and return the ms it took; throw naming `what` after `ms`, a ceiling
 * only: on a loaded 2-core machine a few seconds is not enough for a child process to start.
 */
export async function waitFor(
  cond: () => boolean | Promise<boolean>,
  ms = 30_000,
  what = 'condition',
): Promise<number> {
  const start = Date.now();
  if (!(await poll(cond, ms))) throw new Error(`${what} not met within ${ms} ms`);
  return Date.now() - start;
}
