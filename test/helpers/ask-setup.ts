/**
 * What every test of asking the person starts with: a workspace of files, a daemon whose policy
 * asks, an admin connection to see the grants, and the person, whose answers the test sets.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RootsClient } from '../../protocol/client.js';
import { startDaemon, type TestDaemon } from './daemon.js';
import { ownedShortDir, real } from './proxy.js';

export interface AskDaemon {
  /** The workspace (canonical), holding `files`. */
  w: string;
  d: TestDaemon;
  /** An admin connection, to read grants and lock down. */
  admin: RootsClient;
}

/** Write `files` (workspace-relative path to text) into a fresh workspace, start a daemon on `policy(w)`. */
export async function startAskDaemon(
  t: { teardown(fn: () => unknown): void },
  files: Record<string, string>,
  policy: (w: string) => string,
): Promise<AskDaemon> {
  const dir = ownedShortDir(t);
  const w = join(real(dir), 'w');
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(w, rel, '..'), { recursive: true });
    writeFileSync(join(w, rel), text);
  }
  const d = await startDaemon(t, policy(w), { dir });
  const admin = await d.connect('admin');
  return { w, d, admin };
}

/** The person: each question recorded, and answered by whatever the test set last. */
export interface Person<P, A> {
  asked: P[];
  answer: (p: P) => A | Promise<A>;
  /** The host's elicitation handler. */
  elicit: (p: P) => Promise<A>;
}

export function askPerson<P, A>(first: (p: P) => A | Promise<A>): Person<P, A> {
  const person: Person<P, A> = {
    asked: [],
    answer: first,
    elicit: (p) => {
      person.asked.push(p);
      return Promise.resolve(person.answer(p));
    },
  };
  return person;
}
