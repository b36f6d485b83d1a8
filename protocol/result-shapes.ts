/**
 * The fields of each result a client reads, and their JSON types: a daemon's answer is checked
 * against them before any caller reads it. A daemon of another version (or anything else on the
 * socket) then gets one clear error naming the field, not a `TypeError` from deep in a command,
 * and a `roots/check` whose `allowed` is not a boolean is an error, never an allow by truthiness.
 * Only what callers rely on is listed; fields a newer daemon adds pass.
 */
import { RootsError } from '../common/errors.js';
import type { Method, ResultOf } from './methods.js';

type Kind = 'string' | 'number' | 'boolean' | 'array' | 'object';

/** Dotted paths into the result (`policy.files`) and the type each must have. */
const SHAPES: { [M in Method]: Record<string, Kind> } = {
  // The protocol version is checked by `connect`, with its own message.
  initialize: {},
  'roots/list': { roots: 'array', _meta: 'object', '_meta.mcp-roots/revision': 'number' },
  'roots/subscribe': { revision: 'number' },
  'roots/unsubscribe': {},
  'roots/check': { allowed: 'boolean', access: 'string', reason: 'string' },
  'policy/explain': { server: 'string', roots: 'array', rules: 'array' },
  'policy/reload': { ok: 'boolean', revision: 'number', errors: 'array', warnings: 'array' },
  'daemon/status': {
    version: 'string',
    pid: 'number',
    uptimeSeconds: 'number',
    socket: 'string',
    policy: 'object',
    'policy.files': 'array',
    'policy.revision': 'number',
    'policy.loadedAt': 'string',
    'policy.errors': 'array',
    'policy.warnings': 'array',
    servers: 'array',
    clients: 'number',
    subscriptions: 'number',
    connections: 'array',
    lockdown: 'boolean',
    watches: 'object',
    'watches.directories': 'number',
    'watches.mode': 'string',
    'watches.degraded': 'array',
  },
  'grants/add': {
    grant: 'object',
    'grant.server': 'string',
    'grant.path': 'string',
    'grant.readOnly': 'boolean',
    'grant.expires': 'string',
  },
  'grants/list': { grants: 'array' },
  'grants/revoke': { revoked: 'number' },
  'policy/lockdown': { lockdown: 'boolean' },
  'log/ask': {},
  'log/refused': {},
};

function kindOf(value: unknown): Kind | 'null' | 'missing' | 'other' {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const t = typeof value;
  return t === 'string' || t === 'number' || t === 'boolean' || t === 'object' ? t : 'other';
}

/** `kind` with its article: `an array`, `a string`. */
const a = (kind: string): string => `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`;

/** What is wrong with `result` as an answer to `method`, or undefined when it has every field. */
export function resultProblem(method: Method, result: unknown): string | undefined {
  const top = kindOf(result);
  if (top !== 'object') return `the result is ${top === 'null' ? top : a(top)}, not an object`;
  for (const [path, want] of Object.entries(SHAPES[method])) {
    let value: unknown = result;
    // A dotted path names nested objects; `mcp-roots/revision` is one key with a slash.
    for (const key of path.split('.')) {
      value = kindOf(value) === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    }
    const got = kindOf(value);
    if (got !== want)
      return `\`${path}\` is ${got === 'missing' || got === 'null' ? got : a(got)}, not ${a(want)}`;
  }
  return undefined;
}

/** `result` as `method`'s result, or a PROTOCOL error that says which field is wrong. */
export function checkedResult<M extends Method>(
  method: M,
  result: unknown,
  socketPath: string,
): ResultOf<M> {
  const problem = resultProblem(method, result);
  if (problem === undefined) return result as ResultOf<M>;
  throw new RootsError(
    'PROTOCOL',
    `the answer of mcp-rootsd on ${socketPath} to ${method} is not what this client expects: ${problem}`,
    {
      hint: 'Run mcp-rootsd and rootsctl from the same mcp-roots installation: restart mcp-rootsd after an upgrade (`systemctl --user restart mcp-rootsd`).',
    },
  );
}
