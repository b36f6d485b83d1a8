/**
 * What the proxy should run now, from its command line, the policy's `launch` and `sandbox`, and
 * the server's current roots: a process to start, a reason to wait for roots, or a reason never
 * to start (then the host is told why). Two plans with the same `key` start the same process.
 */
import { shellQuote } from '../common/shell-quote.js';
import { canonicalHome } from '../common/too-wide.js';
import type { DenyMeta, LaunchRule, Root, SandboxRule, Writer } from '../common/types.js';
import {
  expandLaunch,
  hasPlaceholders,
  launchRoots,
  templateProblem,
  type LaunchTemplate,
} from './launch.js';
import type { WatchedPath } from './deny-watch.js';
import { cannotRun } from './cannot-start.js';
import { resolveNpx } from './npx.js';
import { programOverlap } from './program-writers.js';
import type { ProxyOptions } from './options.js';
import { extraPathDenies, sandboxMounts, serverWritable } from './sandbox-mounts.js';
import type { SandboxSupport } from './sandbox-probe.js';
import { bwrapArgs, sandboxEnv, sandboxLayout, type SandboxOp } from './sandbox.js';

/** A process to start. */
export interface SpawnSpec {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string | undefined;
  /**
   * For bwrap: the layout its arguments lay out, which the sandbox's gate checks, and whether
   * the system call filter lets the server make Unix sockets (common/seccomp-filter.ts).
   */
  sandbox?: { layout: SandboxOp[]; unixSockets: boolean };
}

/** The decision, with the reason a person reads in the log or the host shows. */
export type LaunchPlan =
  | {
      kind: 'start';
      spawn: SpawnSpec;
      key: string;
      sandboxed: boolean;
      /** What the log should warn of (roots left out of a value). */
      warnings: string[];
      /** What the log should tell (which of npx's packages or commands runs). */
      notes?: string[];
      /**
       * The program's directories shown in the sandbox, with the denies that could lie in each:
       * watched as `read` paths are, for a denied file that appears later (supervisor.ts).
       */
      programWatch?: WatchedPath[];
    }
  | { kind: 'wait'; reason: string }
  /** `overlap`: another server may write the program, in a clause (program-writers.ts). */
  /** `status`: the command cannot run at all; the proxy ends with it when a first start says so. */
  | { kind: 'refuse'; reason: string; overlap?: string; status?: number };

/** What the plan is made from: fixed options, and the daemon's view when it has one. */
export interface PlanInput {
  options: Pick<ProxyOptions, 'server' | 'sandbox' | 'env' | 'cwd' | 'command' | 'args'>;
  /** The server's roots, or undefined while the daemon has not answered. */
  roots: readonly Root[] | undefined;
  launch: LaunchRule | undefined;
  sandbox: SandboxRule | undefined;
  /** The server's denies and protected paths, hidden in its program's directories in a sandbox. */
  deny?: readonly DenyMeta[] | undefined;
  /** What the policy lets other servers write; undefined while not known (a sandbox then waits). */
  writers: readonly Writer[] | undefined;
  /** The proxy's environment (the server's, less what the sandbox removes). */
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  cwd: string;
  daemonSocket: string | undefined;
  /** Whether bwrap works here; asked only when a sandbox is wanted. */
  sandboxSupport: () => Promise<SandboxSupport>;
  /** Where the sandbox's extra paths led when first laid out in this session (sandbox-mounts.ts). */
  sandboxPins?: Map<string, string>;
  /** The person's git directories the deny watch noted at the start (sandbox-mounts.ts). */
  gitDirs?: readonly string[];
  /** rootsctl as the person can run it (hint-commands.ts), for what a waiting start says. */
  rootsctl?: string;
}

/** The command line's command, else the policy's `launch`. */
export function launchTemplate(input: PlanInput): LaunchTemplate | string {
  const o = input.options;
  if (o.command !== undefined) {
    return { command: o.command, args: [...o.args], env: [...o.env], cwd: o.cwd };
  }
  const l = input.launch;
  if (l === undefined) {
    return input.roots === undefined
      ? 'waiting for mcp-rootsd: there is no command after -- and the policy’s servers.<name>.launch is not known yet'
      : `no command after -- and the policy has no servers.${o.server}.launch: give one or the other`;
  }
  return {
    command: l.command,
    args: [...(l.args ?? [])],
    env: [...Object.entries(l.env ?? {}), ...o.env],
    cwd: o.cwd ?? l.cwd,
  };
}

/** Whether the sandbox is asked for, by the command line or by the policy. */
export function sandboxWanted(input: Pick<PlanInput, 'options' | 'sandbox'>): boolean {
  return input.options.sandbox || input.sandbox !== undefined;
}

export async function planLaunch(input: PlanInput): Promise<LaunchPlan> {
  const template = launchTemplate(input);
  if (typeof template === 'string') {
    return input.roots === undefined
      ? { kind: 'wait', reason: template }
      : { kind: 'refuse', reason: template };
  }
  const problem = templateProblem(template);
  if (problem !== undefined) return { kind: 'refuse', reason: problem };
  const sandboxed = sandboxWanted(input);
  if (input.roots === undefined && (sandboxed || hasPlaceholders(template))) {
    return { kind: 'wait', reason: 'waiting for mcp-rootsd to give the server its roots' };
  }
  const expanded = expandLaunch(template, launchRoots(input.roots ?? []));
  if (!expanded.ok) {
    const ctl = input.rootsctl ?? 'rootsctl';
    const explain = `${ctl} explain ${shellQuote(input.options.server)}`;
    return {
      kind: 'wait',
      reason: `${expanded.reason} (none in the policy, all expired or revoked, or lockdown on: \`${ctl} status\` and \`${explain}\` say which)`,
    };
  }
  const launch = expanded.launch;
  const warnings = expanded.leftOut.map(
    (path) =>
      `${JSON.stringify(path)} is left out wherever a root stands inside a value or a longer argument: a server splitting the list at ":", "," or ";" or a line break would read it as other paths`,
  );
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(input.env)) if (v !== undefined) env[k] = v;
  for (const [k, v] of launch.env) env[k] = v;

  if (!sandboxed) {
    const spawn: SpawnSpec = { command: launch.command, args: launch.args, env, cwd: launch.cwd };
    return { kind: 'start', spawn, key: JSON.stringify(spawn), sandboxed, warnings };
  }
  const support = await input.sandboxSupport();
  if (!support.ok) {
    return {
      kind: 'refuse',
      reason: `the server runs only in a sandbox, and the sandbox cannot start: ${support.reason}. It was not started unsandboxed`,
    };
  }
  // The home as the bound places are, canonical: one reached by a link was not known for it.
  const program = { env, cwd: launch.cwd ?? input.cwd, home: canonicalHome(input.home) };
  const given = input.sandbox ?? { read: [], write: [], network: true };
  // Sandboxed by --sandbox alone, or with no `read` or `write` path: the denies still hold in the
  // program's directories (sandbox-mounts.ts).
  const rule =
    given.deny === undefined && input.deny !== undefined
      ? { ...given, deny: [...input.deny] }
      : given;
  const direct = await resolveNpx(launch, program, await serverWritable(input.roots ?? [], rule));
  if ('problem' in direct) return { kind: 'refuse', reason: direct.problem };
  const notes = direct.note === undefined ? [] : [direct.note];
  // Inside, the gate would say "not found" and exit 127, which reached the host as a server gone
  // away: told as an unsandboxed start tells it, before anything is laid out.
  const missing = await cannotRun(direct.launch.command, env, program.cwd);
  if (missing !== undefined) return { kind: 'refuse', ...missing };
  let mounts;
  try {
    mounts = await sandboxMounts({
      roots: input.roots ?? [],
      rule,
      launch: direct.launch,
      program,
      daemonSocket: input.daemonSocket,
      disableUserns: support.disableUserns,
      ...(input.sandboxPins === undefined ? {} : { pins: input.sandboxPins }),
      ...(input.gitDirs === undefined ? {} : { gitDirs: input.gitDirs }),
      leftOut: (message) => warnings.push(message),
    });
  } catch (err) {
    return { kind: 'refuse', reason: `cannot lay out the sandbox: ${(err as Error).message}` };
  }
  // Known whenever the roots are, from a daemon that gives it (daemon-link.ts).
  if (input.writers === undefined) {
    return {
      kind: 'refuse',
      reason:
        'the server runs only in a sandbox, and mcp-rootsd did not say which paths other servers may write (an mcp-rootsd older than this proxy? restart it), so whether another server could change its program is unknown. It was not started',
    };
  }
  const overlap = await programOverlap(
    {
      program: mounts.programCheck.shown,
      programGiven: mounts.programCheck.given,
      command: direct.launch.command,
      args: direct.launch.args,
      visible: [...mounts.roots.map((r) => r.path), ...mounts.read, ...mounts.write],
      env,
      cwd: program.cwd,
    },
    input.writers,
  );
  if (overlap !== undefined)
    return { kind: 'refuse', reason: overlap.reason, overlap: overlap.what };
  // One layout for bwrap's arguments and for the check of what they mounted (sandbox-start.ts).
  const layout = sandboxLayout(mounts);
  const spawn: SpawnSpec = {
    command: support.bwrap,
    args: bwrapArgs(mounts, direct.launch, layout),
    env: sandboxEnv(env),
    sandbox: { layout, unixSockets: rule.unixSockets === true },
  };
  const programWatch = (mounts.programDirs ?? []).map((path) => ({
    path,
    denies: extraPathDenies(rule, path, false),
    writable: false,
  }));
  return {
    kind: 'start',
    spawn,
    key: JSON.stringify(spawn),
    sandboxed,
    warnings,
    notes,
    programWatch,
  };
}
