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
 * (`IORING_OP_SOCKET` among them) no filter sees, as Docker's default profile refuses it.
 * Everything else is allowed: the mounts are the confinement.
 *
 * Debuggers (gdb, strace) do not work inside the sandbox as a result.
 */

/** `struct seccomp_data`: the syscall number at offset 0, the architecture at offset 4. */
const NR = 0;
const ARCH = 4;

const LD_W_ABS = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE_K = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const AND_K = 0x54; // BPF_ALU | BPF_AND | BPF_K
const RET_K = 0x06; // BPF_RET | BPF_K

const ALLOW = 0x7fff0000; // SECCOMP_RET_ALLOW
const EPERM = 0x00050000 | 1; // SECCOMP_RET_ERRNO | EPERM

/** `seccomp_data.args[0]`, its low 32 bits on a little-endian machine: `socket()`'s domain. */
const ARG0_LOW = 16;
/** `seccomp_data.args[1]`, its low 32 bits: `socketpair()`'s type (with its flags). */
const ARG1_LOW = 24;
const AF_UNIX = 1;
/** The type's own bits (SOCK_NONBLOCK and SOCK_CLOEXEC lie above them). */
const SOCK_TYPE_MASK = 0xf;
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;
/** io_uring_setup, io_uring_enter, io_uring_register: the same numbers in every ABI here. */
const IO_URING = [425, 426, 427];

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
  /** `socket()`, refused for `AF_UNIX` unless the server may have Unix sockets. */
  socket: number;
  /** `socketpair()`, refused for datagram (any type but stream and seqpacket) likewise. */
  socketpair: number;
  /** Whether system calls with the x32 bit are refused as a whole (x86-64 only). */
  x32?: boolean;
}

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
      x32: true,
    },
    {
      arch: 0x40000003,
      refused: [26, 347, 348, 438, 286, 287, 288, 102],
      socket: 359,
      socketpair: 360,
    },
  ],
  arm64: [
    {
      arch: 0xc00000b7,
      refused: [117, 270, 271, 438, 217, 218, 219],
      socket: 198,
      socketpair: 199,
    },
    // 102 is the old ABI's socketcall, which an EABI kernel does not have: refused all the same.
    {
      arch: 0x40000028,
      refused: [26, 376, 377, 438, 309, 310, 311, 102],
      socket: 281,
      socketpair: 288,
    },
  ],
  riscv64: [
    {
      arch: 0xc00000f3,
      refused: [117, 270, 271, 438, 217, 218, 219],
      socket: 198,
      socketpair: 199,
    },
  ],
};

/** The architectures the sandbox can filter system calls on. */
export const FILTERED_ARCHITECTURES = Object.keys(ABIS);

type Insn = [code: number, jt: number, jf: number, k: number];

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
  const prog: Insn[] = [];
  // Each ABI's block: load the number, refuse the listed ones (and x32), then, for `socket()`,
  // load its domain and refuse AF_UNIX; allow the rest. Jumps go forward only and are relative,
  // so blocks are laid out first and the dispatch put before them.
  const blocks = abis.map((abi) => {
    const b: Insn[] = [[LD_W_ABS, 0, 0, NR]];
    if (abi.x32 === true) b.push([JGE_K, 0, 0, X32_BIT]); // jt patched below
    for (const nr of [...abi.refused, ...IO_URING]) b.push([JEQ_K, 0, 0, nr]);
    const tests = b.length;
    if (!unixSockets) {
      b.push([JEQ_K, 0, 2, abi.socket]); // not socket(): on to socketpair()'s test
      b.push([LD_W_ABS, 0, 0, ARG0_LOW]);
      b.push([JEQ_K, 6, 5, AF_UNIX]); // AF_UNIX: to the EPERM; otherwise to the ALLOW
      b.push([JEQ_K, 0, 4, abi.socketpair]); // not socketpair(): to the ALLOW
      b.push([LD_W_ABS, 0, 0, ARG1_LOW]);
      b.push([AND_K, 0, 0, SOCK_TYPE_MASK]);
      b.push([JEQ_K, 1, 0, SOCK_STREAM]); // stream: to the ALLOW
      b.push([JEQ_K, 0, 1, SOCK_SEQPACKET]); // seqpacket: the ALLOW; anything else: the EPERM
    }
    b.push([RET_K, 0, 0, ALLOW]);
    b.push([RET_K, 0, 0, EPERM]);
    // Every number test jumps, when true, to the EPERM at the block's end.
    for (let i = 1; i < tests; i++) b[i]![1] = b.length - 1 - (i + 1);
    return b;
  });
  // Dispatch on the architecture: an unknown one (a foreign binary through binfmt) is refused.
  prog.push([LD_W_ABS, 0, 0, ARCH]);
  let offset = abis.length + 1; // past the tests and the refusal that follows them
  abis.forEach((abi, i) => {
    prog.push([JEQ_K, offset - (i + 1), 0, abi.arch]);
    offset += blocks[i]!.length;
  });
  prog.push([RET_K, 0, 0, EPERM]);
  for (const b of blocks) prog.push(...b);
  const out = Buffer.alloc(prog.length * 8);
  prog.forEach(([code, jt, jf, k], i) => {
    out.writeUInt16LE(code, i * 8);
    out.writeUInt8(jt, i * 8 + 2);
    out.writeUInt8(jf, i * 8 + 3);
    out.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return out;
}
