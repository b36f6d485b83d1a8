/**
 * How much one policy may read, and how many of its files are read at once: the one place for
 * these numbers, used by the load (policies/load.ts), the daemon's edit fingerprint
 * (daemon/watch-policy.ts) and its settle-window parse (daemon/policy-edits.ts). Without them an
 * include glob matching thousands of files, or many files of the 1 MiB each may have, made every
 * edit anywhere in the policy's directories read them all, all at once.
 */

/**
 * The most files one load of a policy (the main file and everything it includes) may read; a file
 * reached twice (by two includes, or as many links to it as a glob matches) is read twice.
 */
export const MAX_POLICY_FILES = 256;

/** The most bytes all files of one policy may hold together (each one at most MAX_POLICY_BYTES). */
export const MAX_POLICY_TOTAL_BYTES = 8 * 1024 * 1024;

/**
 * How many policy files are read at once. libuv runs reads on a pool of four threads shared with
 * every access decision's `realpath`; reading a glob's matches all at once queued every check
 * behind them.
 */
export const POLICY_READS_IN_FLIGHT = 4;

/** The error for an include that takes a policy past MAX_POLICY_FILES. */
export function tooManyFilesMessage(count: number): string {
  return (
    `include: the policy would read ${count} files; one policy may read at most ` +
    `${MAX_POLICY_FILES} (a file reached twice counts twice): narrow the include, or merge files`
  );
}

/** The error for an include that takes a policy past MAX_POLICY_TOTAL_BYTES. */
export function tooManyBytesMessage(total: number): string {
  const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
  return (
    `include: the policy's files would hold ${mib(total)} MiB; one policy may hold at most ` +
    `${mib(MAX_POLICY_TOTAL_BYTES)} MiB in all (narrow the include, or shorten its files)`
  );
}

/** `fn` of every item, at most `limit` at a time, the answers in the items' order. */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
