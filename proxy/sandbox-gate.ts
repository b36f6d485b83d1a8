/**
 * The first thing that runs in a sandbox: a shell that shows the proxy the mounts as they came out
 * and starts the server only when the proxy says they are the ones it planned.
 *
 * The plan reads the filesystem, and bwrap mounts what the plan names later, following links in
 * each source and each mount point as it goes. Anything that can write in a root (another
 * sandboxed server sharing it, a person's tool) can swap a directory for a link in between, and a
 * writable bind then lands on a read-only root, or a protected path's mount elsewhere
 * (test/hardening/sandbox-mount-swap.test.ts). The proxy cannot make bwrap 0.8 bind by
 * descriptor, so it checks the result instead: before the server's first instruction, from
 * inside, where nothing the server does can change it yet.
 *
 * The descriptors bwrap and the gate use, past the server's stdin, stdout and stderr:
 */
export const GATE_FDS = {
  /** bwrap reads the system call filter here (`--seccomp`; common/seccomp-filter.ts). */
  filter: 3,
  /** bwrap writes the host pid of the sandbox's init here (`--info-fd`; sandbox-init.ts). */
  info: 4,
  /**
   * The gate writes its /proc/self/mountinfo here, then an empty line (the outer bwrap keeps a copy
   * of this descriptor open, so its end is never seen), then closes it.
   */
  mounts: 5,
  /** The gate reads "go" here, then closes it and becomes the server. */
  go: 6,
} as const;

/**
 * Shell builtins only (`read`, `printf`, `exec`, `[`): the sandbox's system has /bin/sh, and
 * nothing else can be counted on. Exits 125 without starting the server when told anything but
 * "go" (or nothing: the proxy went away). Both descriptors are closed before the server starts,
 * so it inherits neither.
 */
const GATE_SCRIPT = [
  `{ while IFS= read -r l; do printf '%s\\n' "$l"; done </proc/self/mountinfo; printf '\\n'; } >&${GATE_FDS.mounts} || exit 125`,
  `exec ${GATE_FDS.mounts}>&-`,
  `IFS= read -r go <&${GATE_FDS.go} || exit 125`,
  `exec ${GATE_FDS.go}<&-`,
  `[ "$go" = go ] || exit 125`,
  `exec "$@"`,
].join('\n');

/** The name the gate's shell runs under ($0), which `ps` shows until the server replaces it. */
const GATE_NAME = 'mcp-roots-sandbox-gate';

/** The command bwrap runs: the gate, then (by `exec`) the server's own command line. */
export function gateCommand(command: string, args: readonly string[]): string[] {
  return ['/bin/sh', '-c', GATE_SCRIPT, GATE_NAME, command, ...args];
}
