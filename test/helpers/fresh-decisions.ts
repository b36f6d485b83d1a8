/**
 * The check an attack table ends with: after the attack, every path of the tree must be decided
 * by the daemon that lived through it exactly as by a daemon started fresh on the same tree.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import type { RootsClient } from '../../protocol/client.js';
import { waitFor } from './poll.js';

/** Every path under `top` as the filesystem holds it (links listed, not followed). */
export function walkTree(top: string): string[] {
  const out: string[] = [top];
  for (const name of readdirSync(top)) {
    const p = join(top, name);
    if (lstatSync(p).isDirectory()) out.push(...walkTree(p));
    else out.push(p);
  }
  return out;
}

/** Each path's read and write decision for `server`, keyed `<access> <path below tree>`. */
async function decide(
  client: RootsClient,
  server: string,
  tree: string,
  paths: string[],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const p of paths) {
    for (const access of ['read', 'write'] as const) {
      const r = await client.check(server, p, access);
      out[`${access} ${p.slice(tree.length)}`] = r.allowed ? 'allowed' : 'refused';
    }
  }
  return out;
}

/**
 * Assert that `live` decides every path under `tree` for `server` as `fresh` does: first that it
 * allows nothing `fresh` refuses, then that every decision is the same. The live daemon may still
 * be catching up with a trailing recompute, so its decisions are asked again until they agree
 * (up to 15 s); `fresh`'s are asked once. Returns the fresh decisions.
 */
export async function assertSameAsFresh(
  t: Test,
  live: RootsClient,
  fresh: RootsClient,
  server: string,
  tree: string,
): Promise<Record<string, string>> {
  const paths = walkTree(tree);
  const want = await decide(fresh, server, tree, paths);
  let got: Record<string, string> = {};
  await waitFor(
    async () =>
      JSON.stringify((got = await decide(live, server, tree, paths))) === JSON.stringify(want),
    15_000,
    'the live decisions to equal the fresh ones',
  ).catch(() => undefined);
  const leaks = Object.keys(want).filter((k) => want[k] === 'refused' && got[k] === 'allowed');
  t.same(leaks, [], 'nothing the fresh daemon refuses is allowed');
  t.same(got, want, 'every decision is the fresh daemon\u2019s');
  return want;
}
