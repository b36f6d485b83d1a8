/**
 * Turning the schema validator's errors into messages a person can act on: at the key or value
 * to fix, in words ("must be true or false, not \"yes\""), with the key a typo most likely meant.
 */
import type { ErrorObject } from 'ajv';
import schema from '../roots.schema.json' with { type: 'json' };
import { isObject } from '../common/is-object.js';
import { levenshtein } from '../common/levenshtein.js';
import type { PolicyError } from '../common/types.js';
import { oneLine } from './error-list.js';
import type { Pos } from './model.js';
import { dotted, type Locator, type Segment } from './yaml-locate.js';

const EXPIRES_EXAMPLE = '2026-12-31T18:00:00Z';

/** The keys and indexes of an ajv instancePath (a JSON pointer), unescaped, all as strings. */
export function pointerParts(instancePath: string): string[] {
  if (instancePath === '') return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Split an ajv instancePath into segments, numbering the indexes of arrays in `data`. */
function segments(instancePath: string, data: unknown): Segment[] {
  const out: Segment[] = [];
  let cur: unknown = data;
  for (const seg of pointerParts(instancePath)) {
    if (Array.isArray(cur)) {
      out.push(Number(seg));
      cur = cur[Number(seg)];
    } else {
      out.push(seg);
      cur = isObject(cur) ? cur[seg] : undefined;
    }
  }
  return out;
}

/** How a value reads in a message: strings quoted, collections by kind. */
function show(v: unknown): string {
  if (v === null || v === undefined) return 'empty';
  if (typeof v === 'string') {
    const s = JSON.stringify(v);
    return s.length > 60 ? `${s.slice(0, 56)}…"` : s;
  }
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return typeof v;
}

const TYPE_WORDS: Record<string, string> = {
  boolean: 'true or false',
  string: 'a string',
  array: 'a list',
  object: 'a mapping',
  number: 'a number',
  integer: 'a whole number',
  null: 'empty',
};

function orList(items: string[]): string {
  return items.length <= 1
    ? (items[0] ?? '')
    : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

function typeMessage(expected: string, value: unknown, parent: unknown, item: boolean): string {
  const want = TYPE_WORDS[expected] ?? expected;
  if (value === null && item) return `is empty; fill it in or remove the "-" line`;
  if (value === null) {
    const fill: Record<string, string> = {
      object: 'write its keys under it, indented',
      array: 'write its items under it as "- " lines',
    };
    // A bare ~ is YAML for "nothing": the likeliest way to write an empty path by accident.
    const tilde =
      expected === 'string'
        ? ' (for the home directory write "~" in quotes: a bare ~ is YAML\'s empty value)'
        : '';
    return `is empty; ${fill[expected] ?? `write ${want}`}, or remove the key${tilde}`;
  }
  const base = `must be ${want}, not ${show(value)}`;
  if (expected === 'string' && (typeof value === 'number' || typeof value === 'boolean')) {
    return `${base} (put it in quotes: "${String(value)}")`;
  }
  if (expected === 'array' && typeof value === 'string') {
    return `${base}; write each item on its own line starting with "- "`;
  }
  const props = isObject(parent) && isObject(parent.properties) ? parent.properties : {};
  if (expected === 'object' && typeof value === 'string' && 'path' in props) {
    return `${base}; write "- path: ${value}"`;
  }
  if (expected === 'object' && Array.isArray(value) && 'roots' in props) {
    return `${base}; put the entries under "roots:"`;
  }
  return base;
}

/** The allowed key a typo most likely meant: same letters ignoring case and -_, or 2 edits away. */
function closestKey(key: string, allowed: string[]): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[-_\s]/g, '');
  const same = allowed.find((k) => norm(k) === norm(key));
  if (same !== undefined) return same;
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of allowed) {
    const d = levenshtein(norm(key), norm(k));
    if (d < bestDistance && d < k.length) [best, bestDistance] = [k, d];
  }
  return best;
}

const DEFINITIONS = (schema as { definitions: Record<string, Record<string, unknown>> })
  .definitions;

/** The JSON types a schema (following a local $ref) accepts. */
function acceptedTypes(s: unknown): string[] {
  if (!isObject(s)) return [];
  if (typeof s.$ref === 'string') {
    return acceptedTypes(DEFINITIONS[s.$ref.replace('#/definitions/', '')]);
  }
  if (typeof s.type === 'string') return [s.type];
  if (Array.isArray(s.type)) return s.type.filter((t): t is string => typeof t === 'string');
  return [];
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

interface Issue {
  segs: Segment[];
  pos: Pos;
  message: string;
}

export function schemaErrors(errors: ErrorObject[], data: unknown, locate: Locator): PolicyError[] {
  const issues: Issue[] = [];

  // anyOf (only deny entries use it): keep the errors of the branch that takes the value's
  // type; when no branch takes it, say once what an entry may be.
  const anyOf = new Map<string, boolean>();
  for (const e of errors) {
    if (e.keyword !== 'anyOf') continue;
    const branches = (e.schema ?? []) as unknown[];
    const accepted = branches.flatMap(acceptedTypes).includes(jsonType(e.data));
    anyOf.set(e.instancePath, accepted);
    if (!accepted) {
      const segs = segments(e.instancePath, data);
      issues.push({
        segs,
        pos: locate.value(segs),
        message: `must be a path string or {path, access}, not ${show(e.data)}`,
      });
    }
  }

  for (const e of errors) {
    if (e.keyword === 'anyOf' || e.keyword === 'propertyNames') continue;
    if (anyOf.size > 0 && hiddenByAnyOf(e, anyOf)) continue;
    const issue = describe(e, data, locate);
    if (issue) issues.push(issue);
  }

  return issues.map((i) => ({
    ...i.pos,
    message: i.segs.length === 0 ? i.message : `${dotted(i.segs)}: ${i.message}`,
  }));
}

/** Whether an error is noise from an anyOf branch that does not apply. */
function hiddenByAnyOf(e: ErrorObject, anyOf: Map<string, boolean>): boolean {
  // The type error of the other branch.
  if (e.keyword === 'type' && anyOf.has(e.instancePath)) return true;
  // Anything inside a value that no branch takes: reported once already.
  for (let p = e.instancePath; p !== ''; p = p.slice(0, p.lastIndexOf('/'))) {
    if (anyOf.get(p) === false) return true;
  }
  return false;
}

function describe(e: ErrorObject, data: unknown, locate: Locator): Issue | undefined {
  const segs = segments(e.instancePath, data);
  const params = e.params as Record<string, unknown>;

  if (e.propertyName !== undefined) {
    // A bad key of a map such as servers: point at the key itself.
    const keySegs = [...segs, e.propertyName];
    const what = segs[segs.length - 1] === 'tools' ? 'a tool name' : 'a server name';
    const messages: Record<string, string> = {
      minLength: `${what} must not be empty`,
      maxLength: `${what} may be at most ${String(params.limit)} characters, not ${e.propertyName.length}`,
      pattern: `${what} must not contain control characters`,
    };
    return {
      segs: keySegs,
      pos: locate.key(keySegs),
      message: messages[e.keyword] ?? `${what} is not valid`,
    };
  }

  switch (e.keyword) {
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      const props = isObject(e.parentSchema?.properties) ? e.parentSchema.properties : {};
      const allowed = Object.keys(props);
      const guess = closestKey(key, allowed);
      const keySegs = [...segs, key];
      if (key === '<<') {
        return {
          segs: keySegs,
          pos: locate.key(keySegs),
          message: 'YAML merge keys (<<) are not supported; write the keys out',
        };
      }
      return {
        segs: keySegs,
        pos: locate.key(keySegs),
        message:
          guess !== undefined
            ? `unknown key (did you mean "${guess}"?)`
            : `unknown key; the keys allowed here are ${orList(allowed)}`,
      };
    }
    case 'required': {
      const key = String(params.missingProperty);
      if (segs.length === 0 && key === 'version') {
        return {
          segs: ['version'],
          pos: locate.start(),
          message: 'missing (every policy file starts with "version: 1")',
        };
      }
      return { segs, pos: locate.value(segs), message: `missing required key "${key}"` };
    }
    case 'type': {
      const expected = String(params.type);
      if (segs.length === 0) {
        const message =
          e.data === null
            ? 'the file is empty; a policy file starts with "version: 1"'
            : `the file must be a mapping that starts with "version: 1", not ${show(e.data)}`;
        return { segs, pos: locate.start(), message };
      }
      return {
        segs,
        pos: locate.value(segs),
        message: typeMessage(expected, e.data, e.parentSchema, typeof segs.at(-1) === 'number'),
      };
    }
    case 'const':
      return {
        segs,
        pos: locate.value(segs),
        message: `must be ${JSON.stringify(params.allowedValue)}`,
      };
    case 'enum': {
      const values = (params.allowedValues as unknown[]).map((v) => JSON.stringify(v));
      return {
        segs,
        pos: locate.value(segs),
        message: `must be ${orList(values)}, not ${show(e.data)}`,
      };
    }
    case 'format':
      return {
        segs,
        pos: locate.value(segs),
        message: `${show(e.data)} is not an RFC 3339 date-time with a zone, e.g. ${EXPIRES_EXAMPLE}`,
      };
    case 'minLength':
      return { segs, pos: locate.value(segs), message: 'must not be empty' };
    case 'pattern':
      // The only pattern outside propertyNames: paths may not hold NUL.
      return { segs, pos: locate.value(segs), message: 'must not contain a NUL character' };
    default:
      return { segs, pos: locate.value(segs), message: oneLine(e.message ?? 'is not valid') };
  }
}
