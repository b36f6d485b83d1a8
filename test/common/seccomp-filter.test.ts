/**
 * The sandbox's system call filter, run through a classic-BPF interpreter of the few
 * instructions it uses: what the kernel would answer for each architecture and call.
 */
import t from 'tap';
import { FILTERED_ARCHITECTURES, sandboxFilter } from '../../common/seccomp-filter.js';

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;

/**
 * The filter's verdict for one system call (the kernel's `struct seccomp_data`: nr, arch, the
 * instruction pointer's two words, then the arguments; here the first two, little-endian).
 */
function run(prog: Buffer, arch: number, nr: number, arg0 = 0, arg1 = 0): number {
  const data = [nr >>> 0, arch >>> 0, 0, 0, arg0 >>> 0, 0, arg1 >>> 0, 0];
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
      // The domain is read only for socket(): another call with 1 as its first argument passes.
      t.equal(run(prog, arch, 63, AF_UNIX), ALLOW, `${abi}: another call with the same argument`);
    }
    const allowing = sandboxFilter('x64', { unixSockets: true })!;
    t.equal(run(allowing, X86_64, 41, AF_UNIX), ALLOW, 'sandbox.unixSockets: allowed');
    t.equal(run(allowing, X86_64, 53, AF_UNIX, DGRAM), ALLOW, 'a datagram pair too');
    t.equal(run(allowing, X86_64, 425), EPERM, 'sandbox.unixSockets: io_uring still refused');
    t.equal(run(allowing, X86_64, 101), EPERM, 'sandbox.unixSockets: ptrace still refused');
    t.equal(run(allowing, I386, 102, 1), EPERM, 'sandbox.unixSockets: socketcall still refused');
    t.end();
  },
);

void t.test('an architecture without a table has no filter (the sandbox refuses to start)', (t) => {
  t.equal(sandboxFilter('ppc64'), undefined);
  t.same([...FILTERED_ARCHITECTURES].sort(), ['arm64', 'riscv64', 'x64']);
  t.ok(sandboxFilter()!.length % 8 === 0, 'whole instructions, as bwrap requires');
  t.end();
});
