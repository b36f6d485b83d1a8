/** The socket fuzzer shared by test/hardening/fuzz-socket.test.ts and bench/fuzz-socket.ts. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection, type Socket } from 'node:net';
import { setImmediate as tick } from 'node:timers/promises';
import { Rng } from './fuzz-rng.js';

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

/** The server name valid fuzz requests use, so that a grant they make cannot touch the checked list. */
const FUZZ_SERVER = 'fuzz-target';

const MIB = 1024 * 1024;
const DEEP = 100_000;

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

// ---- payloads ----

type Kind =
  | 'missing'
  | 'null'
  | 'number'
  | 'string'
  | 'bool'
  | 'array'
  | 'object'
  | 'huge-string'
  | 'negative'
  | 'nan-ish';

const KINDS: readonly Kind[] = [
  'missing',
  'null',
  'number',
  'string',
  'bool',
  'array',
  'object',
  'huge-string',
  'negative',
  'nan-ish',
];

/** Every method of docs/protocol.md with a valid value (as JSON text) for each param. */
const METHODS: Record<string, Record<string, string>> = {
  initialize: {
    protocolVersion: '"mcp-roots/1"',
    clientInfo: '{"name":"fuzz","version":"0"}',
  },
  'roots/list': { server: JSON.stringify(FUZZ_SERVER), subscribe: 'true' },
  'roots/subscribe': { server: JSON.stringify(FUZZ_SERVER) },
  'roots/unsubscribe': { server: JSON.stringify(FUZZ_SERVER) },
  'roots/check': { server: JSON.stringify(FUZZ_SERVER), path: '"/etc/passwd"', access: '"write"' },
  'policy/explain': { server: JSON.stringify(FUZZ_SERVER) },
  'policy/reload': {},
  'daemon/status': {},
  'grants/add': {
    server: JSON.stringify(FUZZ_SERVER),
    path: '"/nonexistent-mcp-roots-fuzz"',
    seconds: '60',
    readOnly: 'true',
    name: '"fuzz"',
  },
  'grants/list': {},
  'grants/revoke': { server: JSON.stringify(FUZZ_SERVER), path: '"/nonexistent-mcp-roots-fuzz"' },
  'policy/lockdown': { on: 'false' },
};

/** Every (method, param) pair of the table, `params` itself included. */
export const PARAM_TABLE: [string, string][] = Object.entries(METHODS).flatMap(([m, params]) => [
  [m, 'params'] as [string, string],
  ...Object.keys(params).map((p) => [m, p] as [string, string]),
  ...(m === 'initialize' ? ([[m, 'clientInfo.name']] as [string, string][]) : []),
]);

const NUMBERS = ['0', '1.5', '-0', '1e308', '9007199254740993', '1e-400', '123456789012345678901'];
const NAN_ISH = ['"NaN"', '"Infinity"', '"-0"', '"1e999"', 'NaN', 'Infinity', '-Infinity', '1e999'];

function deepArray(closed: boolean): string {
  return '['.repeat(DEEP) + (closed ? ']'.repeat(DEEP) : '');
}

function deepObject(closed: boolean): string {
  return '{"a":'.repeat(DEEP) + (closed ? '1' + '}'.repeat(DEEP) : '');
}

/** A value of `kind` as JSON text (undefined: leave the member out). */
function valueOf(rng: Rng, kind: Kind, param: string): string | undefined {
  switch (kind) {
    case 'missing':
      return undefined;
    case 'null':
      return 'null';
    case 'number':
      return rng.pick(NUMBERS);
    case 'string':
      return JSON.stringify(rng.text(40));
    case 'bool':
      // Lockdown on would empty every list: the checked one too.
      return param === 'on' ? 'false' : rng.pick(['true', 'false']);
    case 'array':
      return rng.pick(['[]', '[1,"a",null]', '["fs"]', deepArray(true)]);
    case 'object':
      return rng.pick(['{}', '{"server":"fs"}', '{"__proto__":{"x":1}}', deepObject(true)]);
    case 'huge-string':
      return JSON.stringify('/' + 'a'.repeat(rng.int(1000, 300_000)));
    case 'negative':
      return rng.pick(['-1', '-9007199254740993', '-1e308']);
    case 'nan-ish':
      return rng.pick(NAN_ISH);
  }
}

function request(id: string, method: string, paramsText: string | undefined): string {
  const params = paramsText === undefined ? '' : `,"params":${paramsText}`;
  return `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)}${params}}`;
}

/** One request from the wrong-types table: a valid request with one param of the wrong kind. */
function wrongType(rng: Rng): string {
  const [method, param] = rng.pick(PARAM_TABLE);
  const kind = rng.pick(KINDS);
  const base = { ...METHODS[method] };
  const id = String(rng.int(1, 1e6));
  if (param === 'params') return request(id, method, valueOf(rng, kind, param));
  if (param === 'clientInfo.name') {
    const name = valueOf(rng, kind, param);
    base.clientInfo = name === undefined ? '{"version":"0"}' : `{"name":${name},"version":"0"}`;
  } else {
    const value = valueOf(rng, kind, param);
    if (value === undefined) delete base[param];
    else base[param] = value;
  }
  const members = Object.entries(base).map(([k, v]) => `${JSON.stringify(k)}:${v}`);
  return request(id, method, `{${members.join(',')}}`);
}

const ID_TEXTS = [
  '1',
  '-1',
  '0',
  '1.5',
  '"s"',
  '""',
  'null',
  'true',
  'false',
  '{}',
  '{"a":1}',
  '[]',
  '[1]',
  '1e999',
  '9007199254740993',
  '"\\u0000"',
];

/** A request (or notification) with an id of some JSON type. */
function oddId(rng: Rng): string {
  const method = rng.pick(Object.keys(METHODS));
  const params = `{"server":${JSON.stringify(FUZZ_SERVER)}}`;
  if (rng.chance(0.2))
    return `{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":${params}}`;
  const id = rng.chance(0.1) ? deepArray(true) : rng.pick(ID_TEXTS);
  return request(id, method, params);
}

const UNKNOWN = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'roots/',
  'ROOTS/LIST',
  'roots/list ',
  'notifications/roots/list_changed',
  '',
  'rpc.discover',
];

function unknownMethod(rng: Rng): string {
  const method = rng.chance(0.7) ? rng.pick(UNKNOWN) : rng.text(rng.chance(0.1) ? 5000 : 30);
  return request(String(rng.int(1, 1000)), method, '{}');
}

function validRequest(rng: Rng): string {
  const id = String(rng.int(1, 1e6));
  switch (rng.int(0, 5)) {
    case 0:
      return request(
        id,
        'roots/list',
        `{"server":"fs","subscribe":${rng.pick(['true', 'false'])}}`,
      );
    case 1:
      return request(
        id,
        'roots/check',
        `{"server":"fs","path":${JSON.stringify('/' + rng.text(20))}}`,
      );
    case 2:
      return request(id, 'daemon/status', '{}');
    case 3:
      return request(id, 'policy/explain', '{"server":"fs"}');
    case 4:
      return request(id, 'roots/unsubscribe', '{"server":"fs"}');
    default:
      return request(id, 'grants/list', '{}');
  }
}

/** Structurally odd JSON: numbers, strings and nesting at the top level or in the envelope. */
function oddJson(rng: Rng): string {
  switch (rng.int(0, 9)) {
    case 0:
      return deepArray(rng.chance(0.5));
    case 1:
      return deepObject(rng.chance(0.5));
    case 2:
      return `{"jsonrpc":"2.0","id":1,"method":"roots/list","params":${deepObject(true)}}`;
    case 3:
      return `{"jsonrpc":"2.0","id":1,"method":${deepArray(true)}}`;
    case 4:
      return `{"jsonrpc":"2.0","id":1,"result":${deepArray(true)}}`;
    case 5:
      return '9'.repeat(rng.int(300, 100_000));
    case 6:
      return JSON.stringify('x'.repeat(rng.int(1000, 500_000)));
    case 7:
      return `[${validRequest(rng)}]`;
    case 8:
      return `{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"server":"fs"},"id":2}`;
    default:
      return rng.pick([
        'null',
        'true',
        '"2.0"',
        '{}',
        '{"jsonrpc":"1.0","id":1,"method":"daemon/status"}',
      ]);
  }
}

/** One line to send (newline included), and whether the daemon will close the connection for it. */
function payload(rng: Rng): { data: Buffer; closes: boolean } {
  const r = rng.next();
  let text: string;
  if (r < 0.15) {
    const bytes = rng.bytes(rng.int(1, 2000));
    return { data: Buffer.concat([bytes, Buffer.from('\n')]), closes: false };
  } else if (r < 0.25) {
    const full = rng.chance(0.5) ? wrongType(rng) : validRequest(rng);
    text = full.slice(0, rng.int(0, full.length - 1));
  } else if (r < 0.5) {
    text = wrongType(rng);
  } else if (r < 0.6) {
    text = oddId(rng);
  } else if (r < 0.67) {
    text = unknownMethod(rng);
  } else if (r < 0.77) {
    text = oddJson(rng);
  } else if (r < 0.775) {
    // Over the 1 MiB cap: answered with -32600, then the connection is closed.
    const filler = 'y'.repeat(MIB + rng.int(1, 4096));
    return { data: Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"${filler}"}\n`), closes: true };
  } else {
    text = validRequest(rng);
  }
  return { data: Buffer.from(text + '\n'), closes: false };
}

// ---- connections ----

const KNOWN_CODES = new Set([-32700, -32600, -32601, -32602, -32603, -32000]);

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
  if (msg.method === 'notifications/roots/list_changed' && !('id' in msg)) return;
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
