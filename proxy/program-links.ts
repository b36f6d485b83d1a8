/**
 * The links on the way to the server's program. The sandbox shows each file of the program at its
 * canonical place, and the gate runs the command as the policy or the host names it: a command
 * found through a link in a directory the sandbox does not show (pipx's `~/.local/bin/x`) was
 * "not found" inside, and so was a script whose `#!` line names a virtual environment's
 * `bin/python3`, a link to a link into a Python installation (pyenv's `versions/3.11.7/bin`).
 * Each name on the way that lies where the sandbox shows nothing and leads elsewhere (a link, or a
 * name under a linked directory) is made a link there, leading straight to the file, which it
 * shows; the directories that held them stay hidden.
 */
import { readlink, realpath } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { inside } from './sandbox-paths.js';

/** A link to make in the sandbox. */
export interface ProgramLink {
  /** Where a link on the way to a file of the program lies outside. */
  path: string;
  /** The canonical file it leads to, in the end, which the sandbox shows. */
  target: string;
}

/** The most links followed from one name (the kernel's own limit). */
const MAX_HOPS = 40;

/**
 * Where no link is made: bwrap makes each link while it sets the sandbox up, resolving its name
 * in the sandbox's `/proc` and `/dev`, whose magic links lead out of it. A server replaced its
 * script by a link to `/proc/self/cwd/oldroot/...`, which led to a file of its own for the proxy
 * (its working directory in the server's root) and, for bwrap, to the host's root: bwrap made a
 * link, and the directories above it, anywhere the person may write (an attacker pass).
 */
const NO_LINKS_IN = ['/proc', '/dev', '/sys'];

/**
 * The links to make for `named` (the program's files as the command line and `#!` lines name
 * them): every link on the way from a name to a file the sandbox shows (`shown` holds it) that
 * lies where nothing in `shown` does, never in `/proc`, `/dev` or `/sys` and never named by a
 * link that lies where the server may write (`serverOwn`). A file the sandbox does not show gets
 * none: it fails inside as it would without them.
 */
export async function programLinks(
  named: readonly string[],
  shown: readonly string[],
  serverOwn: readonly string[],
): Promise<ProgramLink[]> {
  const visible = (p: string): boolean => shown.some((s) => inside(p, s));
  const forbidden = (p: string): boolean => NO_LINKS_IN.some((d) => inside(p, d));
  const links = new Map<string, string>();
  for (const name of new Set(named)) {
    const target = await realpath(name).catch(() => undefined);
    if (target === undefined || !visible(target)) continue;
    let at = name;
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      // A name that is a link, or that a linked directory on the way leads elsewhere (a PATH
      // entry `~/bin` leading into a dotfiles repository): made a link itself, where nothing
      // shows it.
      if (forbidden(at)) break;
      if (at !== target && !visible(at) && (await realpath(at).catch(() => undefined)) === target)
        links.set(at, target);
      // A link where the server may write names where the next one lies: it chooses nothing.
      if (serverOwn.some((own) => inside(at, own))) break;
      const next = await readlink(at).catch(() => undefined);
      if (next === undefined) break;
      // As the kernel reads a relative link: from the directory it is in, where that leads.
      const dir = await realpath(dirname(at)).catch(() => undefined);
      if (dir === undefined) break;
      at = resolve(dir, next);
    }
  }
  return [...links].map(([path, target]) => ({ path, target }));
}
