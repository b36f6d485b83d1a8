/** Hand-written params checks, one per method: typed params out, or a `-32602` error naming the field. */
import type { ErrorCode } from '../common/errors.js';
import { isObject } from '../common/is-object.js';
import { parseRfc3339, RFC3339_WANTED } from '../common/rfc3339.js';
import type { Access, Root } from '../common/types.js';
import type {
  AskAnswer,
  ClientInfo,
  GrantAddParams,
  ListChangedParams,
  RulesChangedParams,
  LogAskParams,
  LogRefusedParams,
  Method,
  NotificationMethod,
  Notifications,
  ParamsOf,
} from './methods.js';
import { invalidParams } from './rpc-errors.js';
import { MAX_PATH_BYTES } from '../common/linux-limits.js';
import { hasLoneSurrogate } from '../common/well-formed.js';

/** The longest accepted server name, in characters (code points). */
export const MAX_SERVER_NAME_LENGTH = 256;

const NAME_RULE = `a non-empty string of at most ${MAX_SERVER_NAME_LENGTH} characters with no control characters`;

type Fields = Record<string, unknown>;

function hasControlCharacter(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

function codePointLength(s: string): number {
  // Every code point takes one or two UTF-16 units, so short strings need no counting.
  if (s.length <= MAX_SERVER_NAME_LENGTH) return s.length;
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Whether `name` is a valid server name: non-empty, at most 256 characters, no C0/C1 control characters. */
export function isValidServerName(name: unknown): name is string {
  return (
    typeof name === 'string' &&
    name.length > 0 &&
    codePointLength(name) <= MAX_SERVER_NAME_LENGTH &&
    !hasControlCharacter(name)
  );
}

function fail(method: string, field: string, rule: string, code?: ErrorCode): never {
  throw invalidParams(`${method}: params.${field} must be ${rule}`, code);
}

function fieldsOf(method: string, params: unknown): Fields {
  // JSON-RPC lets a request omit params; every mcp-roots method then sees `{}`.
  if (params === undefined) return {};
  if (!isObject(params)) {
    throw invalidParams(`${method}: params must be an object`);
  }
  return params;
}

/** The validator of a method that takes no params: nothing, or an object whose fields are not read. */
function noParams(method: string): (params: unknown) => Record<string, never> {
  return (params) => {
    fieldsOf(method, params);
    return {};
  };
}

function name(method: string, p: Fields, field: string, code?: ErrorCode): string {
  const value = p[field];
  if (!isValidServerName(value)) fail(method, field, NAME_RULE, code);
  return value;
}

function server(method: string, p: Fields): string {
  return name(method, p, 'server', 'SERVER_NAME_INVALID');
}

function path(method: string, p: Fields): string {
  const value = p.path;
  if (typeof value !== 'string' || value.length === 0 || value.includes('\0')) {
    fail(method, 'path', 'a non-empty string with no NUL character', 'PATH_INVALID');
  }
  // Longer, no system call takes it: refused before any work, which a long run of `..` made
  // quadratic (an attacker pass: a 1 MB path took 50 s).
  if (Buffer.byteLength(value) > MAX_PATH_BYTES) {
    fail(
      method,
      'path',
      `a path of at most ${MAX_PATH_BYTES} bytes (Linux's PATH_MAX: no program can open a longer one)`,
      'PATH_INVALID',
    );
  }
  if (hasLoneSurrogate(value)) {
    fail(method, 'path', 'well-formed Unicode (a lone surrogate names no file)', 'PATH_INVALID');
  }
  return value;
}

function optionalBoolean(method: string, p: Fields, field: string): boolean | undefined {
  const value = p[field];
  if (value !== undefined && typeof value !== 'boolean') fail(method, field, 'true or false');
  return value;
}

function requiredBoolean(method: string, p: Fields, field: string): boolean {
  const value = p[field];
  if (typeof value !== 'boolean') fail(method, field, 'true or false');
  return value;
}

function access(method: string, p: Fields): Access | undefined {
  const value = p.access;
  if (value !== undefined && value !== 'read' && value !== 'write') {
    fail(method, 'access', '"read" or "write"');
  }
  return value;
}

function grantLifetime(method: string, p: Fields): { seconds?: number; expires?: string } {
  const { seconds, expires } = p;
  if (seconds !== undefined && expires !== undefined) {
    fail(method, 'seconds', 'absent when params.expires is given (one or the other)');
  }
  if (seconds !== undefined) {
    if (typeof seconds !== 'number' || !Number.isSafeInteger(seconds) || seconds <= 0) {
      fail(method, 'seconds', 'a positive integer');
    }
    return { seconds };
  }
  if (expires !== undefined) {
    if (typeof expires !== 'string' || parseRfc3339(expires) === undefined) {
      fail(method, 'expires', RFC3339_WANTED);
    }
    return { expires };
  }
  return {};
}

function clientInfo(method: string, p: Fields): ClientInfo | undefined {
  const value = p.clientInfo;
  if (value === undefined) return undefined;
  if (!isObject(value)) {
    fail(method, 'clientInfo', 'an object {name, version}');
  }
  const info = value as Fields;
  return { name: name(method, info, 'name'), version: name(method, info, 'version') };
}

/** Longest tool or client label the decision log keeps. */
export const MAX_LABEL = 200;

/** An optional label for the decision log: printable text, at most MAX_LABEL characters. */
function optionalLabel(method: string, p: Fields, field: string): string | undefined {
  const value = p[field];
  if (value === undefined) return undefined;
  // eslint-disable-next-line no-control-regex
  if (typeof value !== 'string' || value.length > MAX_LABEL || /[\u0000-\u001f\u007f]/.test(value))
    fail(method, field, `a string of at most ${MAX_LABEL} printable characters`);
  return value;
}

function withOptional<T extends object, K extends string, V>(
  base: T,
  key: K,
  value: V | undefined,
): T & Partial<Record<K, V>> {
  if (value !== undefined) (base as Record<string, unknown>)[key] = value;
  return base;
}

type Validators = { [M in Method]: (params: unknown) => ParamsOf<M> };

/** The validator of every method; each returns a fresh object holding only the known fields. */
export const paramValidators: Validators = {
  initialize(params) {
    const m = 'initialize';
    const p = fieldsOf(m, params);
    const version = p.protocolVersion;
    if (typeof version !== 'string' || version.length === 0) {
      fail(m, 'protocolVersion', 'a non-empty string such as "mcp-roots/1"');
    }
    return withOptional({ protocolVersion: version }, 'clientInfo', clientInfo(m, p));
  },
  'roots/list'(params) {
    const m = 'roots/list';
    const p = fieldsOf(m, params);
    return withOptional({ server: server(m, p) }, 'subscribe', optionalBoolean(m, p, 'subscribe'));
  },
  'roots/subscribe'(params) {
    const m = 'roots/subscribe';
    return { server: server(m, fieldsOf(m, params)) };
  },
  'roots/unsubscribe'(params) {
    const m = 'roots/unsubscribe';
    return { server: server(m, fieldsOf(m, params)) };
  },
  'roots/check'(params) {
    const m = 'roots/check';
    const p = fieldsOf(m, params);
    const base = withOptional({ server: server(m, p), path: path(m, p) }, 'access', access(m, p));
    return withOptional(
      withOptional(
        withOptional(base, 'tool', optionalLabel(m, p, 'tool')),
        'client',
        optionalLabel(m, p, 'client'),
      ),
      'record',
      optionalBoolean(m, p, 'record'),
    );
  },
  'policy/explain'(params) {
    const m = 'policy/explain';
    const p = fieldsOf(m, params);
    return withOptional({ server: server(m, p) }, 'writers', optionalBoolean(m, p, 'writers'));
  },
  'policy/reload': noParams('policy/reload'),
  'daemon/status': noParams('daemon/status'),
  'grants/add'(params) {
    const m = 'grants/add';
    const p = fieldsOf(m, params);
    const base = { server: server(m, p), path: path(m, p), ...grantLifetime(m, p) };
    const readOnly = optionalBoolean(m, p, 'readOnly');
    const label = p.name === undefined ? undefined : name(m, p, 'name');
    const asked = optionalBoolean(m, p, 'asked');
    return withOptional(
      withOptional(withOptional(base, 'readOnly', readOnly), 'name', label),
      'asked',
      asked,
    ) as GrantAddParams;
  },
  'grants/list': noParams('grants/list'),
  'grants/revoke'(params) {
    const m = 'grants/revoke';
    const p = fieldsOf(m, params);
    return withOptional(
      { server: server(m, p) },
      'path',
      p.path === undefined ? undefined : path(m, p),
    );
  },
  'policy/lockdown'(params) {
    const m = 'policy/lockdown';
    return { on: requiredBoolean(m, fieldsOf(m, params), 'on') };
  },
  'log/ask'(params) {
    const m = 'log/ask';
    const p = fieldsOf(m, params);
    const how = access(m, p);
    if (how === undefined) fail(m, 'access', '"read" or "write"');
    if (!ASK_ANSWERS.includes(p.answer as AskAnswer))
      fail(m, 'answer', '"accept", "decline", "cancel" or "timeout"');
    const base: LogAskParams = {
      server: server(m, p),
      path: path(m, p),
      access: how,
      answer: p.answer as AskAnswer,
    };
    const withLabels = withOptional(
      withOptional(base, 'tool', optionalLabel(m, p, 'tool')),
      'client',
      optionalLabel(m, p, 'client'),
    );
    return withOptional(withLabels, 'granted', granted(m, p));
  },
  'log/refused'(params) {
    const m = 'log/refused';
    const p = fieldsOf(m, params);
    const how = access(m, p);
    if (how === undefined) fail(m, 'access', '"read" or "write"');
    const reason = p.reason;
    if (typeof reason !== 'string' || reason.length === 0 || reason.length > MAX_REASON)
      fail(m, 'reason', `a non-empty string of at most ${MAX_REASON} characters`);
    const base: LogRefusedParams = { server: server(m, p), path: path(m, p), access: how, reason };
    return withOptional(
      withOptional(base, 'tool', optionalLabel(m, p, 'tool')),
      'client',
      optionalLabel(m, p, 'client'),
    );
  },
};

/** The longest reason `log/refused` takes: the proxy's own say a sentence or two. */
export const MAX_REASON = 4096;

export const ASK_ANSWERS: readonly AskAnswer[] = ['accept', 'decline', 'cancel', 'timeout'];

/** `log/ask`'s optional `granted: {path, readOnly, expiresAt}`. */
function granted(method: string, p: Fields): LogAskParams['granted'] {
  const value = p.granted;
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail(method, 'granted', 'an object {path, readOnly, expiresAt}');
  const g = value as Fields;
  const expiresAt = g.expiresAt;
  if (typeof expiresAt !== 'string' || parseRfc3339(expiresAt) === undefined)
    fail(method, 'granted.expiresAt', RFC3339_WANTED);
  return {
    path: path(method, g),
    readOnly: requiredBoolean(method, g, 'readOnly'),
    expiresAt,
  };
}

/** Whether `method` is a request of mcp-roots/1. */
export function isMethod(method: string): method is Method {
  return Object.hasOwn(paramValidators, method);
}

/** Check the params of request `method`: returns them typed, or throws a `-32602` `RpcError` naming the field. */
export function validateParams<M extends Method>(method: M, params: unknown): ParamsOf<M> {
  return (paramValidators[method] as (params: unknown) => ParamsOf<M>)(params);
}

function roots(method: string, value: unknown): Root[] {
  if (!Array.isArray(value)) fail(method, 'roots', 'an array of roots');
  value.forEach((root: unknown, i) => {
    if (typeof root !== 'object' || root === null || typeof (root as Fields).uri !== 'string') {
      fail(method, `roots[${i}]`, 'a root {uri, name?, _meta}');
    }
  });
  return value as Root[];
}

type NotificationValidators = {
  [N in NotificationMethod]: (params: unknown) => Notifications[N];
};

/** The validator of every notification (the client checks what the daemon pushes). */
export const notificationValidators: NotificationValidators = {
  'notifications/roots/list_changed'(params): ListChangedParams {
    const m = 'notifications/roots/list_changed';
    const p = fieldsOf(m, params);
    const { revision, instance } = p;
    if (typeof revision !== 'number' || !Number.isSafeInteger(revision) || revision < 0) {
      fail(m, 'revision', 'a non-negative integer');
    }
    if (typeof instance !== 'string') fail(m, 'instance', 'a string');
    return { server: server(m, p), revision, instance, roots: roots(m, p.roots) };
  },
  'notifications/policy/rules_changed'(params): RulesChangedParams {
    const m = 'notifications/policy/rules_changed';
    return { server: server(m, fieldsOf(m, params)) };
  },
};

/** Whether `method` is a notification of mcp-roots/1. */
export function isNotificationMethod(method: string): method is NotificationMethod {
  return Object.hasOwn(notificationValidators, method);
}

/** Check the params of notification `method`: returns them typed, or throws a `-32602` `RpcError`. */
export function validateNotificationParams<N extends NotificationMethod>(
  method: N,
  params: unknown,
): Notifications[N] {
  return notificationValidators[method](params);
}
