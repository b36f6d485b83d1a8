/** The socket fuzzer shared by test/hardening/fuzz-socket.test.ts and bench/fuzz-socket.ts. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection, type Socket } from 'node:net';
import { setImmediate as tick } from 'node:timers/promises';
import { Rng } from './fuzz-rng.js';
import { payload, request, validRequest } from './fuzz-payloads.js';

export { PARAM_TABLE } from './fuzz-payloads.js';

/** The name whose list every round checks; the fuzzer itself never names it. */
export const CHECKED_SERVER = 'fs';

/** Lay out the tree and the policy the fuzzed daemon serves, under `dir`; returns the policy file and socket path. */
export function writeFuzzTarget(dir: string): { config: string; socket: string } {
  for (const d of ['a', 'b', 'repos/one', 'repos/two']) {
    mkdirSync(join(dir, 'tree', d), { recursive: true });
  }
  const config = join(dir, 'mcp-roots.yaml');
  writeFileSync(
    config,
    `version: 1\nservers:\n  ${CHECKED_SERVER}:\n    roots:\n      - path: ${dir}/tree/a\n      - path: ${dir}/tree/b\n        readOnly: true\n      - path: ${dir}/tree/repos/*\n`,
  );
  return { config, socket: join(dir, 'run', 'rootsd.sock') };
}

/** What one round (or a whole run) did and saw. */
export interface FuzzStats {
  messages: number;
  bytes: number;
  connections: number;
  /** Lines the daemon sent back. */
  answers: number;
  /** Probe requests (valid `roots/list` of the checked server) sent on connections that ended cleanly. */
  probes: number;
  /** Probes answered with exactly the expected list. */
  probesOk: number;
  /** Lines from the daemon that are not a well-formed JSON-RPC answer or notification. */
  malformed: string[];
  /** `-32603` answers: a handler threw something unexpected (a bug). */
  internalErrors: string[];
  /** Connections the daemon closed after an oversized line. */
  cutOff: number;
}

/** An all-zero `FuzzStats`. */
export function emptyStats(): FuzzStats {
  return {
    messages: 0,
    bytes: 0,
    connections: 0,
    answers: 0,
    probes: 0,
    probesOk: 0,
    malformed: [],
    internalErrors: [],
    cutOff: 0,
  };
}

/** Add `b` into `a`. */
export function addStats(a: FuzzStats, b: FuzzStats): void {
  a.messages += b.messages;
  a.bytes += b.bytes;
  a.connections += b.connections;
  a.answers += b.answers;
  a.probes += b.probes;
  a.probesOk += b.probesOk;
  a.malformed.push(...b.malformed.slice(0, 20 - a.malformed.length));
  a.internalErrors.push(...b.internalErrors.slice(0, 20 - a.internalErrors.length));
  a.cutOff += b.cutOff;
}

/** A process's current and peak resident memory in KiB, from /proc. */
export function memoryKiB(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number =>
    Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1]);
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

/** Whether a process is alive (signal 0). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// ---- connections ----

const KNOWN_CODES = new Set([-32700, -32600, -32601, -32602, -32603, -32000]);
/** Notifications the daemon sends a subscriber. */
const DAEMON_NOTIFICATIONS = new Set([
  'notifications/roots/list_changed',
  'notifications/policy/rules_changed',
]);

function checkLine(
  line: string,
  stats: FuzzStats,
  probes: Map<string, string>,
  expected: string,
): void {
  stats.answers++;
  let msg: Record<string, unknown>;
  try {
    msg = JSON.parse(line) as Record<string, unknown>;
  } catch {
    stats.malformed.push(line.slice(0, 200));
    return;
  }
  const fail = (): void => void stats.malformed.push(line.slice(0, 200));
  if (typeof msg !== 'object' || msg === null || msg.jsonrpc !== '2.0') return fail();
  // The daemon's own notifications to a subscriber (a grant, lockdown) are lines too.
  if (DAEMON_NOTIFICATIONS.has(msg.method as string) && !('id' in msg)) {
    const params = msg.params as Record<string, unknown> | undefined;
    return typeof params?.server === 'string' ? undefined : fail();
  }
  const id = msg.id;
  if (!(id === null || typeof id === 'string' || typeof id === 'number')) return fail();
  if ('result' in msg === 'error' in msg) return fail();
  if ('error' in msg) {
    const error = msg.error as Record<string, unknown> | null;
    if (typeof error !== 'object' || error === null || typeof error.message !== 'string') {
      return fail();
    }
    if (!KNOWN_CODES.has(error.code as number)) return fail();
    if (error.code === -32603) stats.internalErrors.push(line.slice(0, 300));
  }
  if (typeof id === 'string' && probes.has(id)) {
    const roots = (msg.result as { roots?: unknown } | undefined)?.roots;
    if (JSON.stringify(roots) === expected) stats.probesOk++;
    probes.delete(id);
  }
}

function connect(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = createConnection({ path });
    s.once('connect', () => {
      s.off('error', reject);
      resolve(s);
    });
    s.once('error', reject);
  });
}

/** Write `data` in random pieces, yielding between them so that connections interleave. */
async function writePieces(rng: Rng, socket: Socket, data: Buffer): Promise<void> {
  let at = 0;
  while (at < data.length && !socket.destroyed) {
    const size = rng.chance(0.5) ? data.length - at : rng.int(1, Math.min(data.length - at, 4096));
    const ok = socket.write(data.subarray(at, at + size));
    at += size;
    if (!ok) await new Promise<void>((r) => socket.once('drain', r).once('close', r));
    else if (rng.chance(0.3)) await tick();
  }
}

/**
 * One fuzzing connection: `count` payloads with probes among them, ending cleanly, half-way
 * through a message, or abruptly. Resolves once the socket has closed.
 */
async function fuzzConnection(
  path: string,
  rng: Rng,
  count: number,
  expected: string,
  serial: string,
): Promise<FuzzStats> {
  const stats = emptyStats();
  stats.connections = 1;
  const socket = await connect(path);
  const probes = new Map<string, string>();
  let pending: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (let nl = pending.indexOf(10); nl !== -1; nl = pending.indexOf(10)) {
      checkLine(pending.subarray(0, nl).toString('utf8'), stats, probes, expected);
      pending = pending.subarray(nl + 1);
    }
  });
  // EPIPE and ECONNRESET are expected after the daemon cuts a connection off.
  socket.on('error', () => {});
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  let cut = false;
  let sentProbes = 0;
  for (let i = 0; i < count && !socket.destroyed; i++) {
    let data: Buffer;
    if (rng.chance(0.15)) {
      const id = `probe-${serial}-${i}`;
      probes.set(id, id);
      sentProbes++;
      data = Buffer.from(request(JSON.stringify(id), 'roots/list', '{"server":"fs"}') + '\n');
    } else {
      const p = payload(rng);
      data = p.data;
      cut ||= p.closes;
    }
    stats.messages++;
    stats.bytes += data.length;
    await writePieces(rng, socket, data);
    if (cut) break;
  }
  const ending = rng.next();
  if (cut) {
    stats.cutOff++;
  } else if (ending < 0.6) {
    // Half-close: every request sent is still answered, then the daemon closes.
    socket.end();
  } else if (ending < 0.8) {
    const partial = Buffer.from(validRequest(rng));
    socket.write(partial.subarray(0, rng.int(1, partial.length - 1)));
    socket.destroy();
  } else {
    socket.destroy();
  }
  const timer = setTimeout(() => socket.destroy(), 20_000);
  await closed;
  clearTimeout(timer);
  // Only a connection that ended cleanly must have had every probe answered.
  if (!cut && ending < 0.6) stats.probes = sentProbes;
  else stats.probesOk = 0;
  return stats;
}

/** Options of one fuzz round. */
export interface RoundOptions {
  socket: string;
  rng: Rng;
  /** Connections open at once. */
  connections: number;
  /** Payloads per connection. */
  messages: number;
  /** The checked server's `roots` as JSON text. */
  expected: string;
  /** Distinguishes probe ids between rounds. */
  round: number;
}

/** Run one round: `connections` fuzzing connections at once, each with its own seeded stream. */
export async function fuzzRound(o: RoundOptions): Promise<FuzzStats> {
  const total = emptyStats();
  const seeds = Array.from({ length: o.connections }, () => o.rng.int(0, 2 ** 31));
  const results = await Promise.all(
    seeds.map((seed, i) =>
      fuzzConnection(o.socket, new Rng(seed), o.messages, o.expected, `${o.round}-${i}`),
    ),
  );
  for (const r of results) addStats(total, r);
  return total;
}
