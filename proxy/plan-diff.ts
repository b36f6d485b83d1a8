/**
 * What differs between two ways of starting the server, in words for the log: the command line,
 * the environment (by name only: values may be secrets), the working directory, the sandbox's
 * mounts and options. A restart's reason names what changed, not only that something did.
 */
import type { SpawnSpec } from './launch-plan.js';

/** How many arguments each bwrap option takes (the ones `sandbox.ts` writes). */
const BWRAP_ARITY: Record<string, number> = {
  '--ro-bind': 2,
  '--bind': 2,
  '--symlink': 2,
  '--tmpfs': 1,
  '--remount-ro': 1,
  '--dev': 1,
  '--proc': 1,
  '--chdir': 1,
  '--seccomp': 1,
  '--info-fd': 1,
};

/** Mentions shown at most per part, so that a line stays readable. */
const SHOWN = 4;

/** A sandbox's options and mounts (one entry per option), and the command it runs. */
function splitBwrap(args: readonly string[]): { mounts: string[]; command: string[] } {
  const mounts: string[] = [];
  let i = 0;
  while (i < args.length && args[i] !== '--') {
    const n = BWRAP_ARITY[args[i]!] ?? 0;
    mounts.push(args.slice(i, i + n + 1).join(' '));
    i += n + 1;
  }
  return { mounts, command: args.slice(i + 1) };
}

function listed(signs: string[]): string {
  const more = signs.length > SHOWN ? `, and ${signs.length - SHOWN} more` : '';
  return `${signs.slice(0, SHOWN).join(', ')}${more}`;
}

/** `+x` and `-y` for what is only in `after` or only in `before`. */
function setDiff(before: readonly string[], after: readonly string[]): string[] {
  const b = new Set(before);
  const a = new Set(after);
  return [
    ...after.filter((x) => !b.has(x)).map((x) => `+${x}`),
    ...before.filter((x) => !a.has(x)).map((x) => `-${x}`),
  ];
}

/** What differs between `before` and `after` (both sandboxed or both not), or [] if nothing. */
export function spawnDifference(before: SpawnSpec, after: SpawnSpec, sandboxed: boolean): string[] {
  const parts: string[] = [];
  const b = sandboxed
    ? splitBwrap(before.args)
    : { mounts: [], command: [before.command, ...before.args] };
  const a = sandboxed
    ? splitBwrap(after.args)
    : { mounts: [], command: [after.command, ...after.args] };
  if (JSON.stringify(b.command) !== JSON.stringify(a.command)) parts.push('its command line');
  const names = new Set([...Object.keys(before.env), ...Object.keys(after.env)]);
  const env = [...names].filter((n) => before.env[n] !== after.env[n]).sort();
  if (env.length > 0) parts.push(`its environment (${listed(env)})`);
  if (before.cwd !== after.cwd) parts.push('its working directory');
  const mounts = setDiff(b.mounts, a.mounts);
  if (mounts.length > 0) parts.push(`its sandbox (${listed(mounts)})`);
  if (parts.length === 0 && before.command !== after.command) parts.push('its sandbox program');
  return parts;
}
