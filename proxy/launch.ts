/**
 * The server's command line from its current roots: `{roots}`, `{roots:rw}`, `{roots:ro}` and
 * `{root}` placeholders in its arguments, environment and working directory. Pure: no I/O.
 */
import { fileURLToPath } from 'node:url';
import type { Root } from '../common/types.js';

/** One root as a launch sees it: its canonical path and whether the server may write there. */
export interface LaunchRoot {
  path: string;
  readOnly: boolean;
}

/** How to start the server, with placeholders not yet expanded. */
export interface LaunchTemplate {
  command: string;
  args: string[];
  /** Variables to set, in order; values may hold placeholders. */
  env: [name: string, value: string][];
  cwd?: string | undefined;
}

/** How to start the server, every placeholder expanded. */
export interface Launch {
  command: string;
  args: string[];
  env: [name: string, value: string][];
  cwd?: string | undefined;
}

/** The expanded launch, or why the server must not start yet. */
export type Expansion =
  | {
      ok: true;
      launch: Launch;
      /** Roots left out of a value or a longer argument: their paths hold a separator. */
      leftOut: string[];
    }
  | { ok: false; reason: string };

/** A placeholder that stands for a list of paths: one argument per path, or `:`-joined in values. */
const LIST = /^\{roots(?::(rw|ro))?\}$/;
/** What servers split a list of paths at, in a value or an argument: `:`, `,`, `;`, line breaks. */
const SEPARATOR = /[:,;\n\r\u0085\u2028\u2029]/;
/** Every placeholder wherever it stands (for values and longer arguments). */
const ANY = /\{roots(?::(?:rw|ro))?\}|\{root\}/g;

/** The roots as paths, in the list's order (the daemon sorts them by canonical path). */
export function launchRoots(roots: readonly Root[]): LaunchRoot[] {
  return roots.map((r) => ({
    path: fileURLToPath(r.uri),
    readOnly: r._meta['mcp-roots/readOnly'],
  }));
}

/** Whether the template uses any placeholder (then it waits for roots and restarts on change). */
export function hasPlaceholders(t: LaunchTemplate): boolean {
  const has = (s: string | undefined): boolean => s !== undefined && new RegExp(ANY).test(s);
  return (
    has(t.command) || t.args.some(has) || t.env.some(([, v]) => has(v)) || has(t.cwd ?? undefined)
  );
}

/**
 * The problem with a template, or undefined: `{roots}` and its kinds may stand only as a whole
 * argument or inside an environment value; the command and the working directory take `{root}`.
 */
export function templateProblem(t: LaunchTemplate): string | undefined {
  const lists = (s: string): string[] =>
    [...s.matchAll(ANY)].map((m) => m[0]).filter((p) => p !== '{root}');
  if (lists(t.command).length > 0) return `the command cannot be ${lists(t.command)[0]}`;
  for (const a of t.args) {
    if (!LIST.test(a) && lists(a).length > 0) {
      return `${JSON.stringify(a)}: ${lists(a)[0]} must be a whole argument (it becomes one argument per root); use {root} inside a longer argument`;
    }
  }
  if (t.cwd !== undefined && lists(t.cwd).length > 0) {
    return `--cwd ${JSON.stringify(t.cwd)}: a working directory is one path; use {root}`;
  }
  for (const [name] of t.env) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      return `--env ${JSON.stringify(name)}: a variable name is letters, digits and _, not starting with a digit`;
    }
  }
  return undefined;
}

function select(roots: readonly LaunchRoot[], kind: string | undefined): string[] {
  if (kind === 'rw') return roots.filter((r) => !r.readOnly).map((r) => r.path);
  if (kind === 'ro') return roots.filter((r) => r.readOnly).map((r) => r.path);
  return roots.map((r) => r.path);
}

/**
 * Expand a template against the roots. Every placeholder must stand for at least one path: an empty
 * list means "everything" to some servers, so such a server is not started at all (fail closed).
 */
export function expandLaunch(t: LaunchTemplate, roots: readonly LaunchRoot[]): Expansion {
  let empty: string | undefined;
  const paths = (placeholder: string): string[] => {
    const kind = placeholder === '{root}' ? undefined : LIST.exec(placeholder)?.[1];
    const list = select(roots, kind);
    const out = placeholder === '{root}' ? list.slice(0, 1) : list;
    if (out.length === 0) empty ??= placeholder;
    return out;
  };
  // Inside a value or a longer argument a path stands among other text that the server splits
  // to read (`DIRS=a:b`, `--dirs=a,b`): a path holding a separator would come back as two
  // (`a:.` as `a` and the working directory, `x:~` as `~`). Such a root is left out there (a
  // directory an agent named so must not widen what the server reads as its roots); `{root}`
  // takes the first root without one. A whole argument, the command and the working directory
  // are one path each, and take any path.
  const leftOut = new Set<string>();
  const amid = (p: string): string => {
    const out: string[] = [];
    for (const path of select(roots, p === '{root}' ? undefined : LIST.exec(p)?.[1])) {
      if (p === '{root}' && out.length === 1) break;
      if (SEPARATOR.test(path)) leftOut.add(path);
      else out.push(path);
    }
    if (out.length === 0) empty ??= p;
    return out.join(':');
  };
  const amidText = (s: string): string => s.replace(ANY, amid);
  const whole = (s: string): string => s.replace(ANY, (p) => paths(p).join(':'));

  const args: string[] = [];
  for (const a of t.args) {
    if (LIST.test(a)) args.push(...paths(a));
    else if (a === '{root}') args.push(whole(a));
    else args.push(amidText(a));
  }
  const launch: Launch = {
    command: whole(t.command),
    args,
    env: t.env.map(([n, v]) => [n, amidText(v)]),
  };
  if (t.cwd !== undefined) launch.cwd = whole(t.cwd);
  if (empty !== undefined) {
    const which =
      empty === '{roots:rw}'
        ? 'read-write roots'
        : empty === '{roots:ro}'
          ? 'read-only roots'
          : 'roots';
    return {
      ok: false,
      // The list says no more than that it is empty: the policy's, an expiry's, or lockdown's
      // doing (launch-plan.ts adds where to look).
      reason: `${empty} has nothing to stand for: the server has no ${which} now`,
    };
  }
  return { ok: true, launch, leftOut: [...leftOut] };
}

/** Whether two launches start the same process (same command, arguments, environment, cwd). */
export function sameLaunch(a: Launch, b: Launch): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
