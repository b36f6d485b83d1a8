/**
 * The system call filter every sandboxed process runs under: classic BPF for seccomp, which
 * bubblewrap installs from a descriptor (`--seccomp`) just before it starts the server. Pure.
 *
 * What it refuses is what reaches into another process of the sandbox: `ptrace`,
 * `process_vm_readv`/`process_vm_writev` and `pidfd_getfd`. The process that matters is the
 * sandbox's own init (bubblewrap's pid 1), which runs as the same user: a server that could
 * write into it could clear its parent-death signal, and then the sandbox (its PID namespace,
 * every process in it, every mount it was given) would outlive the proxy and every stop.
 * `/proc/1/mem` is the third way in; it is covered by a mount (sandbox.ts), not by this filter,
 * which cannot read paths.
 *
 * It refuses the kernel's keyrings too (`add_key`, `request_key`, `keyctl`), as Flatpak's filter
 * does: they are not in any namespace bubblewrap makes. The sandbox's own `@u` and `@s` are new,
 * but a key is judged by its owner's uid, so a server could read, by serial number, a key the
 * person's other programs keep there, link its own into the person's keyrings for them to find,
 * or unlink theirs. `/proc/keys` still lists the keys' names and serials (docs/security.md, limits).
 *
 * It refuses a Unix domain socket made with `socket()`, and a socketpair of datagram sockets
 * (one of a stream or seqpacket pair is connected for good; a datagram one can be disconnected,
 * bound to a name and sent to from elsewhere), unless the policy lets the server have them
 * (`sandbox.unixSockets`). Through one, named in a root two
 * servers share or abstract (shared with the network), a sandboxed server hands an open
 * directory to another, which then keeps what the giver's mounts gave it after a revoke or an
 * expiry took them away: the restart of one server cannot reach a descriptor the other holds.
 * The domain and type are the calls' first and second arguments, which a filter can read (an
 * address, behind a pointer, it cannot). Where the call can also be made another way, that way is refused whole:
 * `socketcall` (32-bit x86's multiplexer, its arguments in memory) and io_uring, whose requests
 * (`IORING_OP_SOCKET` among them) no filter sees, as Docker's default profile refuses it. Of the
 * other socket families only the network's and netlink are allowed (`FAMILIES`: AF_VSOCK, whose
 * ports no network namespace holds, reached the hypervisor with `network: false`).
 *
 * It refuses a set-user-ID or set-group-ID bit in any mode a server gives a file (open, creat,
 * mknod, chmod and their `at` and `f` forms). The sandbox's mounts are `nosuid`, but the file
 * keeps its bits outside, where another user (or, for a proxy run as root, anyone) who runs it
 * runs as its owner. openat2, whose mode a filter cannot read, is refused as an old kernel would
 * (ENOSYS), so that its callers fall back to openat. A directory's set-group-ID bit is refused
 * too (the filter cannot tell a directory from a file): `chmod` of a directory that has it, which
 * keeps it, fails; docs/security.md says what that costs.
 *
 * It refuses a new user namespace (clone or unshare with CLONE_NEWUSER; clone3, whose flags lie
 * behind a pointer, answered ENOSYS so that libc uses clone), as Flatpak's filter does: bubblewrap
 * before 0.8 cannot forbid one, and in one the server holds every capability over what it maps.
 *
 * Everything else is allowed: the mounts are the confinement.
 *
 * Debuggers (gdb, strace) do not work inside the sandbox as a result.
 */

/** `struct seccomp_data`: the syscall number at offset 0, the architecture at offset 4. */
const NR = 0;
const ARCH = 4;
/** `seccomp_data.args[i]`, its low 32 bits on a little-endian machine. */
const argLow = (i: number): number => 16 + 8 * i;

const LD_W_ABS = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE_K = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const JSET_K = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const AND_K = 0x54; // BPF_ALU | BPF_AND | BPF_K
const RET_K = 0x06; // BPF_RET | BPF_K

const ALLOW = 0x7fff0000; // SECCOMP_RET_ALLOW
const EPERM = 0x00050000 | 1; // SECCOMP_RET_ERRNO | EPERM
const ENOSYS = 0x00050000 | 38; // SECCOMP_RET_ERRNO | ENOSYS

const AF_UNIX = 1;
/**
 * The socket families a server may make: the network's (which `--unshare-net` takes away when the
 * policy says `network: false`) and netlink (the interfaces and routes libc asks about). Every
 * other family is refused: AF_VSOCK's ports are the machine's, not a network namespace's, so a
 * server without a network would still reach the hypervisor's services and other sandboxes
 * through it; the rest no server needs.
 */
const FAMILIES = [2, 10, 16]; // AF_INET, AF_INET6, AF_NETLINK
/** The type's own bits (SOCK_NONBLOCK and SOCK_CLOEXEC lie above them). */
const SOCK_TYPE_MASK = 0xf;
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;
/** S_ISUID | S_ISGID: refused in any mode a sandboxed server gives a file. */
const SET_ID_BITS = 0o6000;
/** io_uring_setup, io_uring_enter, io_uring_register: the same numbers in every ABI here. */
const IO_URING = [425, 426, 427];
/**
 * openat2, the same number in every ABI here: its mode lies in a struct behind a pointer, which a
 * filter cannot read. Refused as a kernel without it would (ENOSYS), so that callers use openat.
 */
const OPENAT2 = 437;
/** fchmodat2, the same number in every ABI here, and its mode argument. */
const FCHMODAT2: [number, number] = [452, 2];
/**
 * clone3, the same number in every ABI here: its flags lie in a struct behind a pointer. Refused
 * as an old kernel would (ENOSYS), so that libc falls back to clone, whose flags a filter reads.
 */
const CLONE3 = 435;
/** A new user namespace, in the flags of clone and unshare (their first argument). */
const CLONE_NEWUSER = 0x10000000;

/** x32 system calls carry this bit on x86-64; the sandbox refuses them all (nothing uses x32). */
const X32_BIT = 0x40000000;

/** One ABI a process of this machine can call the kernel through, and its refused numbers. */
interface Abi {
  /** AUDIT_ARCH_* of the ABI. */
  arch: number;
  /**
   * ptrace, process_vm_readv, process_vm_writev, pidfd_getfd; add_key, request_key, keyctl; and
   * `socketcall` where the ABI has one.
   */
  refused: number[];
  /** `socket()`, refused for a family not in `FAMILIES` (AF_UNIX when the server may have them). */
  socket: number;
  /** `socketpair()`, refused for datagram (any type but stream and seqpacket) likewise. */
  socketpair: number;
  /**
   * The calls that give a file its mode, each with the argument the mode is in: open, creat,
   * chmod, fchmod, mknod (where the ABI has them), openat, mknodat, fchmodat.
   */
  modes: [nr: number, arg: number][];
  /** clone and unshare: a new user namespace is refused in their flags. */
  namespaces: [clone: number, unshare: number];
  /** Whether system calls with the x32 bit are refused as a whole (x86-64 only). */
  x32?: boolean;
}

/** The mode-giving calls of the ABIs that have the old ones: i386 and 32-bit arm. */
const modes32 = (openat: number, mknodat: number, fchmodat: number): [number, number][] => [
  [5, 2], // open
  [8, 1], // creat
  [14, 1], // mknod
  [15, 1], // chmod
  [94, 1], // fchmod
  [openat, 3],
  [mknodat, 2],
  [fchmodat, 2],
];

/** The mode-giving calls of the generic table (arm64, riscv64): mknodat, fchmod, fchmodat, openat. */
const MODES_GENERIC: [number, number][] = [
  [33, 2],
  [52, 1],
  [53, 2],
  [56, 3],
];

/**
 * The ABIs of each Node.js architecture, from the kernel's syscall tables. A 64-bit kernel also
 * runs 32-bit code (int 0x80 on x86-64, AArch32 on arm64), with numbers of its own: a filter
 * that checked only the native table would let a 32-bit `ptrace` through.
 */
const ABIS: Partial<Record<NodeJS.Architecture, Abi[]>> = {
  x64: [
    {
      arch: 0xc000003e,
      refused: [101, 310, 311, 438, 248, 249, 250],
      socket: 41,
      socketpair: 53,
      // open, creat, chmod, fchmod, mknod, openat, mknodat, fchmodat
      modes: [
        [2, 2],
        [85, 1],
        [90, 1],
        [91, 1],
        [133, 1],
        [257, 3],
        [259, 2],
        [268, 2],
      ],
      namespaces: [56, 272],
      x32: true,
    },
    {
      arch: 0x40000003,
      refused: [26, 347, 348, 438, 286, 287, 288, 102],
      socket: 359,
      socketpair: 360,
      modes: modes32(295, 297, 306),
      namespaces: [120, 310],
    },
  ],
  arm64: [
    {
      arch: 0xc00000b7,
      refused: [117, 270, 271, 438, 217, 218, 219],
      socket: 198,
      socketpair: 199,
      modes: MODES_GENERIC,
      namespaces: [220, 97],
    },
    // 102 is the old ABI's socketcall, which an EABI kernel does not have: refused all the same.
    {
      arch: 0x40000028,
      refused: [26, 376, 377, 438, 309, 310, 311, 102],
      socket: 281,
      socketpair: 288,
      modes: modes32(322, 324, 333),
      namespaces: [120, 337],
    },
  ],
  riscv64: [
    {
      arch: 0xc00000f3,
      refused: [117, 270, 271, 438, 217, 218, 219],
      socket: 198,
      socketpair: 199,
      modes: MODES_GENERIC,
      namespaces: [220, 97],
    },
  ],
};

/** The architectures the sandbox can filter system calls on. */
export const FILTERED_ARCHITECTURES = Object.keys(ABIS);

/**
 * One instruction, its jumps named by label (`undefined`: the next instruction); `at` names the
 * instruction itself.
 */
interface Op {
  code: number;
  k: number;
  jt?: string;
  jf?: string;
  at?: string;
}

/**
 * The filter for `arch` as bubblewrap reads it (8 bytes an instruction, this machine's byte
 * order), or undefined for an architecture without a table here: the caller refuses to start
 * then, rather than start without the filter. `unixSockets`: the policy lets the server make
 * Unix domain sockets (`sandbox.unixSockets`); io_uring and `socketcall` stay refused.
 */
export function sandboxFilter(
  arch: NodeJS.Architecture = process.arch,
  { unixSockets = false }: { unixSockets?: boolean } = {},
): Buffer | undefined {
  const abis = ABIS[arch];
  if (abis === undefined) return undefined;
  // Dispatch on the architecture: an unknown one (a foreign binary through binfmt) is refused.
  const ops: Op[] = [{ code: LD_W_ABS, k: ARCH }];
  abis.forEach((abi, i) => ops.push({ code: JEQ_K, k: abi.arch, jt: `abi${i}` }));
  ops.push({ code: RET_K, k: EPERM });
  abis.forEach((abi, i) => ops.push(...abiBlock(abi, `abi${i}`, unixSockets)));
  return assemble(ops);
}

/**
 * One ABI's block: load the number; refuse the listed ones (and x32); then each call whose
 * arguments are judged, once its number matched, loads the argument and ends in the block's
 * verdicts (so the number need not be loaded again).
 */
function abiBlock(abi: Abi, label: string, unixSockets: boolean): Op[] {
  const v = (name: string) => `${label}.${name}`;
  const b: Op[] = [{ code: LD_W_ABS, k: NR, at: label }];
  if (abi.x32 === true) b.push({ code: JGE_K, k: X32_BIT, jt: v('eperm') });
  for (const nr of [...abi.refused, ...IO_URING]) b.push({ code: JEQ_K, k: nr, jt: v('eperm') });
  b.push({ code: JEQ_K, k: OPENAT2, jt: v('enosys') });
  b.push({ code: JEQ_K, k: CLONE3, jt: v('enosys') });
  // socket(): its family, from the allowed ones.
  const families = unixSockets ? [AF_UNIX, ...FAMILIES] : FAMILIES;
  b.push({ code: JEQ_K, k: abi.socket, jf: v('socketpair') });
  b.push({ code: LD_W_ABS, k: argLow(0) });
  families.forEach((f, i) => {
    const last = i === families.length - 1;
    b.push({ code: JEQ_K, k: f, jt: v('allow'), ...(last ? { jf: v('eperm') } : {}) });
  });
  // socketpair(): of AF_UNIX only (the one family a pair is for), and a stream or seqpacket
  // pair unless Unix sockets are the server's.
  b.push({ code: JEQ_K, k: abi.socketpair, jf: v('bits0'), at: v('socketpair') });
  b.push({ code: LD_W_ABS, k: argLow(0) });
  b.push({ code: JEQ_K, k: AF_UNIX, jf: v('eperm') });
  if (unixSockets) b.push({ code: RET_K, k: ALLOW });
  else {
    b.push({ code: LD_W_ABS, k: argLow(1) });
    b.push({ code: AND_K, k: SOCK_TYPE_MASK });
    b.push({ code: JEQ_K, k: SOCK_STREAM, jt: v('allow') });
    b.push({ code: JEQ_K, k: SOCK_SEQPACKET, jt: v('allow'), jf: v('eperm') });
  }
  // A mode with a set-ID bit: the file would keep it outside, where the mounts' nosuid is not.
  // A new user namespace: its capabilities, where bubblewrap cannot turn them off (before 0.8).
  const bits: [nr: number, arg: number, mask: number][] = [
    ...[...abi.modes, FCHMODAT2].map(([nr, arg]): [number, number, number] => [
      nr,
      arg,
      SET_ID_BITS,
    ]),
    [abi.namespaces[0], 0, CLONE_NEWUSER],
    [abi.namespaces[1], 0, CLONE_NEWUSER],
  ];
  bits.forEach(([nr, arg, mask], i) => {
    const next = i === bits.length - 1 ? v('allow') : v(`bits${i + 1}`);
    b.push({ code: JEQ_K, k: nr, at: v(`bits${i}`), jf: next });
    b.push({ code: LD_W_ABS, k: argLow(arg) });
    b.push({ code: JSET_K, k: mask, jt: v('eperm'), jf: v('allow') });
  });
  b.push({ code: RET_K, k: ALLOW, at: v('allow') });
  b.push({ code: RET_K, k: EPERM, at: v('eperm') });
  b.push({ code: RET_K, k: ENOSYS, at: v('enosys') });
  return b;
}

/**
 * The program as bytes, each label's jumps made relative. Classic BPF jumps only forward, at most
 * 255 instructions: a label behind, or too far, is a mistake in this file, and throws.
 */
function assemble(ops: Op[]): Buffer {
  const where = new Map<string, number>();
  ops.forEach((op, i) => {
    if (op.at === undefined) return;
    if (where.has(op.at)) throw new Error(`seccomp filter: label ${op.at} twice`);
    where.set(op.at, i);
  });
  const offset = (from: number, label: string | undefined): number => {
    if (label === undefined) return 0;
    const to = where.get(label);
    const d = to === undefined ? -1 : to - (from + 1);
    if (d < 0 || d > 255)
      throw new Error(`seccomp filter: no forward jump to ${label} from ${from}`);
    return d;
  };
  const out = Buffer.alloc(ops.length * 8);
  ops.forEach((op, i) => {
    out.writeUInt16LE(op.code, i * 8);
    out.writeUInt8(offset(i, op.jt), i * 8 + 2);
    out.writeUInt8(offset(i, op.jf), i * 8 + 3);
    out.writeUInt32LE(op.k >>> 0, i * 8 + 4);
  });
  return out;
}
