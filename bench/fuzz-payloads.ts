/**
 * What the socket fuzzer sends: valid requests, each param of each method with a value of the
 * wrong type, odd ids, unknown methods, structurally odd JSON and oversized lines, drawn from a
 * seeded stream so that a failure replays.
 */
import type { Rng } from './fuzz-rng.js';

/** The server name valid fuzz requests use, so that a grant they make cannot touch the checked list. */
const FUZZ_SERVER = 'fuzz-target';

const MIB = 1024 * 1024;
const DEEP = 100_000;

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

export function request(id: string, method: string, paramsText: string | undefined): string {
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

export function validRequest(rng: Rng): string {
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
export function payload(rng: Rng): { data: Buffer; closes: boolean } {
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
