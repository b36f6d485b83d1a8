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
   * The gate writes its /proc/self/mountinfo here, then an empty line, then the numbers of its open
   * descriptors, one a line, then an empty line (the outer bwrap keeps a copy of this descriptor
   * open, so its end is never seen), then closes it.
   */
  mounts: 5,
  /** The gate reads "go" here, then closes it and becomes the server. */
  go: 6,
} as const;

/**
 * Shell builtins only (`read`, `printf`, `exec`, `[`, a glob; `-h` leaves out the descriptor the
 * glob itself read /proc/self/fd through, closed by then): the sandbox's system has /bin/sh,
 * and nothing else can be counted on. Exits 125 without starting the server when told anything
 * but "go" (or nothing: the proxy went away). Both descriptors are closed before the server
 * starts, so it inherits neither; the proxy says "go" only when no other descriptor is open but
 * stdin, stdout and stderr (`descriptorProblems`): the shell cannot close a descriptor above 9.
 */
const GATE_SCRIPT = [
  `{ while IFS= read -r l; do printf '%s\\n' "$l"; done </proc/self/mountinfo; printf '\\n'; } >&${GATE_FDS.mounts} || exit 125`,
  // Not inside the braces: a shell keeps a copy of what it redirects (dash at 10 and up).
  `for f in /proc/self/fd/*; do [ -h "$f" ] && printf '%s\\n' "\${f##*/}" >&${GATE_FDS.mounts}; done`,
  `printf '\\n' >&${GATE_FDS.mounts} || exit 125`,
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

/** The descriptors the gate may hold: the server's stdin, stdout and stderr, and its own two. */
const GATE_OPEN = new Set([0, 1, 2, GATE_FDS.mounts, GATE_FDS.go]);

/**
 * What is wrong with the descriptors the gate listed (numbers, one a line): any other would pass
 * to the server, and one open on a directory outside the mounts gives it that directory and,
 * through `..`, everything above (inherited-fds.ts).
 */
export function descriptorProblems(listed: string): string[] {
  const numbers = listed.split('\n').filter((line) => line !== '');
  if (!numbers.includes('0')) return ['the gate listed no descriptors'];
  const extra = numbers
    .filter((n) => !/^\d+$/.test(n) || !GATE_OPEN.has(Number(n)))
    .sort((a, b) => Number(a) - Number(b));
  return extra.length === 0
    ? []
    : [
        `descriptor${extra.length === 1 ? '' : 's'} ${extra.slice(0, 5).join(', ')} would pass into the sandbox (open in the proxy without close-on-exec)`,
      ];
}
