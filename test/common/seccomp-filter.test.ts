/**
 * The sandbox's system call filter, run through a classic-BPF interpreter of the few
 * instructions it uses: what the kernel would answer for each architecture and call.
 */
import t from 'tap';
import { FILTERED_ARCHITECTURES, sandboxFilter } from '../../common/seccomp-filter.js';

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const ENOSYS = 0x00050026;

/**
 * The filter's verdict for one system call (the kernel's `struct seccomp_data`: nr, arch, the
 * instruction pointer's two words, then the six arguments, each two words, little-endian).
 */
function run(prog: Buffer, arch: number, nr: number, ...args: number[]): number {
  const data = [nr >>> 0, arch >>> 0, 0, 0];
  for (let i = 0; i < 6; i++) data.push((args[i] ?? 0) >>> 0, 0);
  let acc = 0;
  for (let pc = 0, steps = 0; steps < 1000; steps++) {
    if (pc * 8 >= prog.length) throw new Error(`ran off the end at ${pc}`);
    const code = prog.readUInt16LE(pc * 8);
    const jt = prog.readUInt8(pc * 8 + 2);
    const jf = prog.readUInt8(pc * 8 + 3);
    const k = prog.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) acc = data[k / 4]!;
    else if (code === 0x15) pc += acc === k ? jt : jf;
    else if (code === 0x35) pc += acc >= k ? jt : jf;
    else if (code === 0x45) pc += (acc & k) !== 0 ? jt : jf;
    else if (code === 0x54) acc = (acc & k) >>> 0;
    else if (code === 0x06) return k;
    else throw new Error(`unknown instruction ${code.toString(16)}`);
    pc++;
  }
  throw new Error('no verdict');
}

const X86_64 = 0xc000003e;
const I386 = 0x40000003;
const AARCH64 = 0xc00000b7;
const ARM = 0x40000028;

void t.test(
  'x86-64: ptrace, the other ways into a process and the keyrings are refused, in every ABI',
  (t) => {
    const prog = sandboxFilter('x64')!;
    for (const nr of [101, 310, 311, 438, 248, 249, 250])
      t.equal(run(prog, X86_64, nr), EPERM, `x86-64 ${nr}`);
    for (const nr of [26, 347, 348, 438, 286, 287, 288])
      t.equal(run(prog, I386, nr), EPERM, `i386 ${nr}`);
    // x32 numbers (ptrace is 521 there) carry bit 30: all refused.
    for (const nr of [521, 0, 1]) t.equal(run(prog, X86_64, 0x40000000 | nr), EPERM, `x32 ${nr}`);
    // read, write, openat, clone, execve, prctl, kill: allowed.
    for (const nr of [0, 1, 257, 56, 59, 157, 62]) t.equal(run(prog, X86_64, nr), ALLOW, `${nr}`);
    for (const nr of [3, 4, 5, 172]) t.equal(run(prog, I386, nr), ALLOW, `i386 ${nr}`);
    t.equal(run(prog, AARCH64, 63), EPERM, 'a foreign architecture: refused');
    t.end();
  },
);

void t.test('arm64 and riscv64', (t) => {
  const arm64 = sandboxFilter('arm64')!;
  for (const nr of [117, 270, 271, 438, 217, 218, 219])
    t.equal(run(arm64, AARCH64, nr), EPERM, `${nr}`);
  for (const nr of [26, 376, 377, 438, 309, 310, 311])
    t.equal(run(arm64, ARM, nr), EPERM, `arm ${nr}`);
  for (const nr of [63, 64, 56, 221]) t.equal(run(arm64, AARCH64, nr), ALLOW, `${nr}`);
  t.equal(run(arm64, X86_64, 101), EPERM, 'x86-64 on arm64: refused');
  const riscv = sandboxFilter('riscv64')!;
  for (const nr of [117, 219]) t.equal(run(riscv, 0xc00000f3, nr), EPERM, `riscv64 ${nr}`);
  t.equal(run(riscv, 0xc00000f3, 63), ALLOW);
  t.end();
});

void t.test(
  'a Unix socket made with socket() is refused, and io_uring and socketcall with it, unless the policy allows',
  (t) => {
    const AF_UNIX = 1;
    const AF_INET = 2;
    const AF_INET6 = 10;
    const AF_NETLINK = 16;
    const cases: [string, Buffer, number, number, number, number?][] = [
      ['x86-64', sandboxFilter('x64')!, X86_64, 41, 53],
      ['i386', sandboxFilter('x64')!, I386, 359, 360, 102],
      ['arm64', sandboxFilter('arm64')!, AARCH64, 198, 199],
      ['arm', sandboxFilter('arm64')!, ARM, 281, 288, 102],
      ['riscv64', sandboxFilter('riscv64')!, 0xc00000f3, 198, 199],
    ];
    const [STREAM, DGRAM, SEQPACKET, NONBLOCK, CLOEXEC] = [1, 2, 5, 0o4000, 0o2000000];
    for (const [abi, prog, arch, socket, socketpair, socketcall] of cases) {
      t.equal(run(prog, arch, socket, AF_UNIX), EPERM, `${abi}: socket(AF_UNIX) refused`);
      for (const domain of [AF_INET, AF_INET6, AF_NETLINK])
        t.equal(run(prog, arch, socket, domain), ALLOW, `${abi}: socket(${domain}) allowed`);
      // AF_VSOCK (its ports are the machine's, whatever the network namespace), AF_PACKET,
      // AF_ALG, AF_BLUETOOTH, and a family with bits above the low word's: refused.
      for (const domain of [40, 17, 38, 31, 0, 46])
        t.equal(run(prog, arch, socket, domain), EPERM, `${abi}: socket(${domain}) refused`);
      for (const nr of [425, 426, 427])
        t.equal(run(prog, arch, nr), EPERM, `${abi}: io_uring ${nr}`);
      if (socketcall !== undefined)
        t.equal(run(prog, arch, socketcall, 1), EPERM, `${abi}: socketcall refused whole`);
      // A socketpair: stream and seqpacket (flags or not) are connected for good; a datagram one
      // can be disconnected and bound to a name, so it is refused.
      for (const type of [STREAM, SEQPACKET, STREAM | NONBLOCK | CLOEXEC, SEQPACKET | CLOEXEC])
        t.equal(run(prog, arch, socketpair, AF_UNIX, type), ALLOW, `${abi}: socketpair(${type})`);
      for (const type of [DGRAM, DGRAM | CLOEXEC, 3, 0])
        t.equal(
          run(prog, arch, socketpair, AF_UNIX, type),
          EPERM,
          `${abi}: socketpair(${type}) refused`,
        );
      // A pair of any other family (AF_VSOCK, AF_INET, AF_TIPC) is refused.
      for (const domain of [40, AF_INET, 30])
        t.equal(
          run(prog, arch, socketpair, domain, STREAM),
          EPERM,
          `${abi}: socketpair(${domain})`,
        );
      // The domain is read only for socket(): another call with 1 as its first argument passes.
      t.equal(run(prog, arch, 63, AF_UNIX), ALLOW, `${abi}: another call with the same argument`);
    }
    const allowing = sandboxFilter('x64', { unixSockets: true })!;
    t.equal(run(allowing, X86_64, 41, AF_UNIX), ALLOW, 'sandbox.unixSockets: allowed');
    t.equal(run(allowing, X86_64, 41, 40), EPERM, 'sandbox.unixSockets: AF_VSOCK still refused');
    t.equal(run(allowing, X86_64, 53, AF_UNIX, DGRAM), ALLOW, 'a datagram pair too');
    t.equal(run(allowing, X86_64, 53, 40, STREAM), EPERM, 'a pair of another family still not');
    t.equal(run(allowing, X86_64, 425), EPERM, 'sandbox.unixSockets: io_uring still refused');
    t.equal(run(allowing, X86_64, 101), EPERM, 'sandbox.unixSockets: ptrace still refused');
    t.equal(run(allowing, I386, 102, 1), EPERM, 'sandbox.unixSockets: socketcall still refused');
    t.end();
  },
);

void t.test('a set-user-ID or set-group-ID mode is refused in every call that gives one', (t) => {
  // Each ABI's mode-giving calls, with the argument the mode is in (fchmodat2 is 452 in all).
  const x64 = sandboxFilter('x64')!;
  const arm64 = sandboxFilter('arm64')!;
  const riscv = sandboxFilter('riscv64')!;
  const old32: [number, number][] = [
    [5, 2],
    [8, 1],
    [14, 1],
    [15, 1],
    [94, 1],
  ];
  const generic: [number, number][] = [
    [33, 2],
    [52, 1],
    [53, 2],
    [56, 3],
    [452, 2],
  ];
  const cases: [string, Buffer, number, [number, number][]][] = [
    [
      'x86-64',
      x64,
      X86_64,
      [
        [2, 2],
        [85, 1],
        [90, 1],
        [91, 1],
        [133, 1],
        [257, 3],
        [259, 2],
        [268, 2],
        [452, 2],
      ],
    ],
    ['i386', x64, I386, [...old32, [295, 3], [297, 2], [306, 2], [452, 2]]],
    ['arm64', arm64, AARCH64, generic],
    ['arm', arm64, ARM, [...old32, [322, 3], [324, 2], [333, 2], [452, 2]]],
    ['riscv64', riscv, 0xc00000f3, generic],
  ];
  for (const [abi, prog, arch, calls] of cases) {
    for (const [nr, arg] of calls) {
      const withMode = (mode: number) => {
        const args = [0, 0, 0, 0];
        // The other arguments hold set-ID-looking bits too: only the mode's are read.
        for (let i = 0; i < 4; i++) args[i] = i === arg ? mode : 0o6000;
        return run(prog, arch, nr, ...args);
      };
      t.equal(withMode(0o4755), EPERM, `${abi} ${nr}: set-user-ID refused`);
      t.equal(withMode(0o2755), EPERM, `${abi} ${nr}: set-group-ID refused`);
      t.equal(withMode(0o755), ALLOW, `${abi} ${nr}: an ordinary mode allowed`);
      t.equal(withMode(0o1777), ALLOW, `${abi} ${nr}: the sticky bit allowed`);
    }
    t.equal(run(prog, arch, 437), ENOSYS, `${abi}: openat2 answered as an old kernel would`);
  }
  // A new user namespace: refused in clone and unshare's flags, in every ABI; clone3 (flags
  // behind a pointer) answered as an old kernel would.
  const NEWUSER = 0x10000000;
  const spawns: [string, Buffer, number, number, number][] = [
    ['x86-64', x64, X86_64, 56, 272],
    ['i386', x64, I386, 120, 310],
    ['arm64', arm64, AARCH64, 220, 97],
    ['arm', arm64, ARM, 120, 337],
    ['riscv64', riscv, 0xc00000f3, 220, 97],
  ];
  for (const [abi, prog, arch, clone, unshare] of spawns) {
    t.equal(run(prog, arch, clone, NEWUSER | 17), EPERM, `${abi}: clone(CLONE_NEWUSER) refused`);
    t.equal(run(prog, arch, unshare, NEWUSER), EPERM, `${abi}: unshare(CLONE_NEWUSER) refused`);
    // A thread (CLONE_VM | CLONE_THREAD | ...) and a fork (SIGCHLD) go on.
    t.equal(run(prog, arch, clone, 0x3d0f00), ALLOW, `${abi}: a thread's clone allowed`);
    t.equal(run(prog, arch, clone, 17), ALLOW, `${abi}: a fork allowed`);
    t.equal(
      run(prog, arch, unshare, 0x20000),
      ALLOW,
      `${abi}: unshare(CLONE_NEWNS) left to the kernel`,
    );
    t.equal(run(prog, arch, 435), ENOSYS, `${abi}: clone3 answered as an old kernel would`);
  }
  // mkdir's mode is not read: a set-group-ID directory gives no one more than its group has.
  t.equal(run(x64, X86_64, 83, 0, 0o2755), ALLOW, 'mkdir with set-group-ID: allowed');
  t.end();
});

void t.test('an architecture without a table has no filter (the sandbox refuses to start)', (t) => {
  t.equal(sandboxFilter('ppc64'), undefined);
  t.same([...FILTERED_ARCHITECTURES].sort(), ['arm64', 'riscv64', 'x64']);
  t.ok(sandboxFilter()!.length % 8 === 0, 'whole instructions, as bwrap requires');
  t.end();
});
