/**
 * The bubblewrap command line that runs a server inside its roots. Pure: the mounts come from
 * `sandbox-mounts.ts`, which reads the filesystem; this file only orders them.
 *
 * The sandbox starts from an empty root (`--tmpfs /`) and adds what the server may see, rather
 * than binding `/` and hiding what it may not: a list of what is visible is short and complete,
 * a list of what is hidden never is. Later mounts cover earlier ones, so the order below goes from
 * the broadest to the most specific, and the denies come last.
 */
import type { ProgramLink } from './program-links.js';
import type { Launch, LaunchRoot } from './launch.js';
import { GATE_FDS, gateCommand } from './sandbox-gate.js';

/**
 * The system, read-only, and why each is there. Anything not listed (`/home`, `/root`, `/run`,
 * `/tmp`, `/var`, `/mnt`, `/media`, `/srv`, `/boot`, `/sys`) does not exist in the sandbox.
 */
export const SYSTEM_PATHS: readonly [path: string, why: string][] = [
  ['/usr', 'programs, libraries and the interpreters servers run on (node, python, git)'],
  ['/bin', 'the shell and base tools; on merged-/usr systems a link into /usr'],
  ['/sbin', 'system tools some programs call by absolute path; often a link into /usr'],
  ['/lib', 'the dynamic loader and base libraries; often a link into /usr'],
  ['/lib32', '32-bit libraries, where the system has them'],
  ['/lib64', 'the 64-bit dynamic loader (/lib64/ld-linux-x86-64.so.2) named in every binary'],
  ['/libx32', 'x32 libraries, where the system has them'],
  ['/etc', 'name resolution, TLS certificates, users and groups, locale and time zone'],
  ['/opt', 'software installed system-wide outside the package manager'],
  ['/nix/store', 'programs on Nix systems, where present'],
];

/**
 * The parts of /proc through which root changes the whole machine: the kernel's settings
 * (`/proc/sys`: `kernel.core_pattern` and `kernel.modprobe` name programs the kernel runs as root,
 * outside every sandbox), the SysRq trigger, and the filesystems' settings. The kernel lets real
 * root write them by file mode alone, whatever capabilities were dropped, and a proxy run as root
 * runs its server as real root (bwrap maps uid 0 to itself); bwrap covers /proc/irq and /proc/bus
 * only. Bound read-only over the fresh /proc where this host has them, as container runtimes do.
 */
export const PROC_READ_ONLY = ['/proc/sys', '/proc/sysrq-trigger', '/proc/fs'] as const;

/** Environment variables that name a socket or agent outside the sandbox: never passed in. */
export const SOCKET_ENV = [
  'SSH_AUTH_SOCK',
  'SSH_AGENT_PID',
  'GPG_AGENT_INFO',
  'DBUS_SESSION_BUS_ADDRESS',
  'DBUS_SYSTEM_BUS_ADDRESS',
  'XDG_RUNTIME_DIR',
  'MCP_ROOTS_SOCKET',
  'DISPLAY',
  'WAYLAND_DISPLAY',
  'XAUTHORITY',
] as const;

/** One system path as the host has it. */
export type SystemMount =
  { path: string; kind: 'dir' | 'file' } | { path: string; kind: 'symlink'; target: string };

/** Everything the sandbox shows, already resolved to canonical, existing paths. */
export interface SandboxMounts {
  system: SystemMount[];
  /** Which of PROC_READ_ONLY this host has (a mount needs its source to exist). */
  procReadOnly: string[];
  /** Paths bound read-only below the system: the policy's `sandbox.read`. */
  read: string[];
  roots: LaunchRoot[];
  /** Paths bound writable: the policy's `sandbox.write`. */
  write: string[];
  /** The server's own program (interpreter, script, package), read-only over everything else. */
  program: string[];
  /**
   * Not mounted, for program-writers.ts: the program's paths before the system directories were
   * taken out of `program`, and its files as the command line names them (the start follows a
   * link on the way again).
   */
  programCheck: { shown: string[]; given: string[] };
  /** The directories of `program`, whose denied paths are hidden and watched as a `read` path's. */
  programDirs?: string[];
  /** Links on the way to the program's files, where the sandbox shows nothing (program-links.ts). */
  programLinks?: ProgramLink[];
  /** Denied paths inside what is visible: directories become empty, files unreadable. */
  hidden: { path: string; dir: boolean }[];
  /** Protected and write-denied paths inside what is visible: read-only. */
  readOnly: string[];
  /**
   * Directories whose names decide what a mount above covers: the ancestors of a nested root, of
   * the program and of a denied or protected path whose rule depends on them. Each one inside a
   * writable mount is bound onto itself (see `pinsAfter`).
   */
  pinned: string[];
  /** Keep the network (the default) or give the server none. */
  network: boolean;
  /** Whether this bwrap knows `--disable-userns` (0.8.0 and later). */
  disableUserns: boolean;
}

/** One step of the sandbox's layout, in the order bwrap takes them (later mounts cover earlier). */
export type SandboxOp =
  | { op: 'bind'; source: string; dest: string; readOnly: boolean }
  | { op: 'tmpfs'; dest: string; readOnly: boolean }
  | { op: 'symlink'; target: string; dest: string }
  | { op: 'dev' | 'proc'; dest: string }
  /** Made read-only once everything is mounted (the mount alone, not those below it). */
  | { op: 'remount-ro'; dest: string };

/**
 * Where the sandbox's own init keeps the memory a server could write to clear its parent-death
 * signal (common/seccomp-filter.ts refuses the system calls; this is the file). Bound to /dev/null on a
 * nodev mount, which the kernel refuses to open.
 */
const INIT_MEMORY = ['/proc/1/mem', '/proc/1/task/1/mem'];

/** The mounts that make `m`, broadest first. */
export function sandboxLayout(m: SandboxMounts): SandboxOp[] {
  const ops: SandboxOp[] = [];
  const bind = (source: string, dest: string, readOnly: boolean): void => {
    ops.push({ op: 'bind', source, dest, readOnly });
  };
  // 1. An empty root, the system read-only, fresh /dev, /proc and a private /tmp.
  ops.push({ op: 'tmpfs', dest: '/', readOnly: false });
  for (const s of m.system) {
    if (s.kind === 'symlink') ops.push({ op: 'symlink', target: s.target, dest: s.path });
    else bind(s.path, s.path, true);
  }
  ops.push({ op: 'dev', dest: '/dev' }, { op: 'proc', dest: '/proc' });
  for (const p of m.procReadOnly) bind(p, p, true);
  for (const p of INIT_MEMORY) bind('/dev/null', p, true);
  ops.push({ op: 'tmpfs', dest: '/tmp', readOnly: false });
  ops.push({ op: 'tmpfs', dest: '/var/tmp', readOnly: false });
  // 2. Extra read-only paths, then the roots, then extra writable paths.
  for (const p of m.read) bind(p, p, true);
  // Each writable mount is followed by its pins, before anything is mounted below them.
  const pins = pinsAfter(m);
  m.roots.forEach((r, i) => {
    bind(r.path, r.path, r.readOnly);
    for (const p of pins.get(i) ?? []) bind(p, p, false);
  });
  m.write.forEach((w, i) => {
    bind(w, w, false);
    for (const p of pins.get(m.roots.length + i) ?? []) bind(p, p, false);
  });
  // What is read-only inside an extra writable path (a read-only root, a `read` path) again:
  // the writable bind above covered it.
  const readOnlyMounts = [...m.read, ...m.roots.filter((r) => r.readOnly).map((r) => r.path)];
  for (const p of readOnlyMounts)
    if (m.write.some((w) => p === w || strictlyInside(p, w))) bind(p, p, true);
  // 3. The server's own program: read-only even inside a writable root.
  for (const p of m.program) bind(p, p, true);
  for (const l of m.programLinks ?? []) ops.push({ op: 'symlink', target: l.target, dest: l.path });
  // 4. Denies and protected paths last, so that nothing above uncovers them.
  for (const p of m.readOnly) bind(p, p, true);
  for (const h of m.hidden) {
    // An empty directory nobody can write to; a file bound to /dev/null on a nodev mount, which
    // the kernel refuses to open (EACCES) for reading and for writing.
    if (h.dir) ops.push({ op: 'tmpfs', dest: h.path, readOnly: true });
    else bind('/dev/null', h.path, true);
  }
  // 5. The empty root read-only, now that every mount point is made in it: a write anywhere but
  // a writable mount fails (EROFS) instead of landing in a layer that vanishes with the server.
  // A server told to keep its data in the home (`~/.memory.jsonl`) reported success, and the
  // data was gone.
  ops.push({ op: 'remount-ro', dest: '/' });
  return ops;
}

/**
 * The arguments to `bwrap` that run `launch` inside `m`, through the gate (sandbox-gate.ts), by
 * `layout` (the one the gate's check is given).
 */
export function bwrapArgs(
  m: SandboxMounts,
  launch: Launch,
  layout: readonly SandboxOp[] = sandboxLayout(m),
): string[] {
  const a: string[] = [];
  const add = (...xs: string[]): void => {
    a.push(...xs);
  };
  // Namespaces and process: its own PIDs, IPC and session (no TIOCSTI into the host's terminal),
  // gone with the proxy, no capabilities, and no namespaces of its own to regain them in.
  add('--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  if (!m.network) add('--unshare-net');
  add('--die-with-parent', '--new-session', '--cap-drop', 'ALL');
  if (m.disableUserns) add('--disable-userns');
  // The system call filter, and where bwrap says the init's pid (sandbox-start.ts).
  add('--seccomp', String(GATE_FDS.filter), '--info-fd', String(GATE_FDS.info));
  for (const o of layout) {
    if (o.op === 'bind') add(o.readOnly ? '--ro-bind' : '--bind', o.source, o.dest);
    else if (o.op === 'tmpfs') {
      add('--tmpfs', o.dest);
      if (o.readOnly) add('--remount-ro', o.dest);
    } else if (o.op === 'symlink') add('--symlink', o.target, o.dest);
    else if (o.op === 'remount-ro') add('--remount-ro', o.dest);
    else add(`--${o.op}`, o.dest);
  }
  if (launch.cwd !== undefined) add('--chdir', launch.cwd);
  add('--', ...gateCommand(launch.command, launch.args));
  return a;
}

const strictlyInside = (p: string, dir: string): boolean =>
  p !== dir && p.startsWith(dir === '/' ? '/' : dir + '/');

/**
 * The pins to lay after each writable mount, by its index in roots then write. A mount point
 * cannot be renamed (EBUSY), but a directory that holds one can, and the mount moves with it: a
 * server that renames the parent of a denied directory, of a protected file or of a nested
 * read-only root sees nothing change until its next restart, whose layout no longer finds them
 * there (test/hardening/sandbox-moved-parents.test.ts). Binding each such directory onto itself
 * makes it a mount point too. A pin under a read-only mount needs nothing (renaming there is
 * EROFS). Pins go right after their mount, before any mount below them, which they would cover.
 */
export function pinsAfter(m: SandboxMounts): Map<number, string[]> {
  const mounts = [...m.roots, ...m.write.map((path) => ({ path, readOnly: false }))];
  const out = new Map<number, string[]>();
  for (const p of [...new Set(m.pinned)].sort()) {
    // Later binds cover earlier ones: the last mount holding p is what p is part of (when p is
    // that mount's own path, it is a mount point already).
    let owner = -1;
    mounts.forEach((mount, i) => {
      if (p === mount.path || strictlyInside(p, mount.path)) owner = i;
    });
    if (owner < 0 || mounts[owner]!.readOnly || mounts[owner]!.path === p) continue;
    const list = out.get(owner) ?? [];
    list.push(p);
    out.set(owner, list);
  }
  return out;
}

/** The environment a sandboxed server starts with: the proxy's, without sockets and agents. */
export function sandboxEnv(env: Readonly<Record<string, string | undefined>>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  const drop = new Set<string>(SOCKET_ENV);
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !drop.has(k)) out[k] = v;
  return out;
}
