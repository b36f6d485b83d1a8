/** Parse one policy file: YAML with positions, then validation against roots.schema.json. */
import { createHash } from 'node:crypto';
import type { ErrorObject, ValidateFunction } from 'ajv';
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  type Alias,
  type Document,
  type Pair,
  type YAMLMap,
  type YAMLError,
} from 'yaml';
import schema from '../roots.schema.json' with { type: 'json' };
import { isObject } from '../common/is-object.js';
import { levenshtein } from '../common/levenshtein.js';
import { parseRfc3339 } from '../common/rfc3339.js';
import type { LaunchRule, PolicyError, ToolRule } from '../common/types.js';
import { validate as compiledValidator } from './schema-validator.js';
import type {
  DenyEntry,
  ParsedPolicyFile,
  ParseResult,
  Pos,
  RootEntry,
  ServerBlock,
} from './model.js';

/** The largest policy file accepted, in bytes. */
export const MAX_POLICY_BYTES = 1024 * 1024;

/** How many alias expansions a file may make before it is taken for a "billion laughs" file. */
export const MAX_ALIAS_COUNT = 100;

/** How many errors one file reports at most (a file of 10,000 bad entries needs only the first few). */
export const MAX_ERRORS = 100;

const EXPIRES_EXAMPLE = '2026-12-31T18:00:00Z';

type Access = DenyEntry['access'];
type Kind = NonNullable<RootEntry['kind']>;
type RawDeny = string | { path: string; access?: Access };
interface RawRoot {
  path: string;
  name?: string;
  readOnly?: boolean;
  expires?: string;
  kind?: Kind;
}
interface RawServer {
  readOnly?: boolean;
  roots?: RawRoot[];
  deny?: RawDeny[];
  tools?: Record<string, ToolRule>;
  launch?: LaunchRule;
  sandbox?: boolean | { read?: string[]; write?: string[]; network?: boolean };
}
interface RawPolicy {
  version: 1;
  include?: string[];
  defaults?: { readOnly?: boolean };
  deny?: RawDeny[];
  servers?: Record<string, RawServer>;
}

/** A step into YAML data: a mapping key or a sequence index. */
type Segment = string | number;

/** A YAML node as this module uses it: anything with an optional source range. */
interface AnyNode {
  range?: [number, number, number] | null;
}

/**
 * The schema's validator, compiled from roots.schema.json at build time (scripts/build-validator.mjs):
 * compiling it here at start-up would cost every process ajv and tens of megabytes.
 */
const validateSchema = compiledValidator as unknown as ValidateFunction<RawPolicy>;

/**
 * Parse and validate the text of one policy file. Pure: no filesystem, environment or clock.
 * Never throws; every problem is an entry in `errors`, with `file` as given.
 */
export function parsePolicyText(text: string | Buffer, file: string): ParseResult {
  try {
    return parse(text, file);
  } catch (err) {
    // A safety net: the steps below are meant not to throw, but a policy must never crash a caller.
    const reason = err instanceof RangeError ? 'it is nested too deeply' : oneLine(String(err));
    return { errors: [errorAt(file, 1, 1, `cannot read this policy: ${reason}`)], warnings: [] };
  }
}

function parse(text: string | Buffer, file: string): ParseResult {
  const size = typeof text === 'string' ? Buffer.byteLength(text, 'utf8') : text.length;
  if (size > MAX_POLICY_BYTES) {
    return { errors: [errorAt(file, 1, 1, tooBigMessage(size))], warnings: [] };
  }
  let source: string;
  if (typeof text === 'string') {
    source = text;
  } else {
    const bad = firstInvalidUtf8(text);
    if (bad >= 0) return { errors: [invalidUtf8Error(text, bad, file)], warnings: [] };
    source = new TextDecoder('utf-8').decode(text);
  }

  const lineCounter = new LineCounter();
  const doc = parseDocument(source, {
    lineCounter,
    prettyErrors: false,
    // Checked below in linear time: yaml's own check is quadratic in the size of a mapping.
    uniqueKeys: false,
    // Never print to the process's stderr: every problem becomes an error or a warning here.
    logLevel: 'error',
    // YAML 1.2 core whatever a %YAML directive says: yes/no stay strings and dates stay text;
    // YAML 1.1 tags such as !!timestamp would turn strings into Dates and Buffers.
    schema: 'core',
    resolveKnownTags: false,
  });
  const at = (offset: number): Pos => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, column: col };
  };
  const warnings = doc.warnings.map((w) => ({ ...at(w.pos[0]), message: yamlWarning(w) }));
  if (doc.directives?.yaml.version === '1.1') {
    const message =
      'read as YAML 1.2 whatever %YAML says: yes, no, on and off are strings (write true or false)';
    warnings.unshift({ file, line: 1, column: 1, message });
  }

  if (doc.errors.length > 0) {
    const errors = doc.errors.map((e) => yamlError(e, doc, source, at));
    return { errors: sortErrors(dedupe(errors)), warnings };
  }

  const keyErrors = badKeys(doc, doc.contents, [], []).map(({ node, segs, duplicate }) => ({
    ...at(node.range?.[0] ?? 0),
    message: duplicate
      ? `${dotted(segs)}: duplicate key; a key may appear only once in a mapping, so remove or merge one`
      : `${segs.length === 0 ? 'a key' : `${dotted(segs)}: a key`} must be a name, ` +
        'not a mapping or list; is a ":" or a quote misplaced?',
  }));
  if (keyErrors.length > 0) return { errors: sortErrors(dedupe(keyErrors)), warnings };

  const aliases = collectAliases(doc.contents, []);
  const unresolved = aliases.filter((a) => a.resolve(doc) === undefined);
  if (unresolved.length > 0) {
    const errors = unresolved.map((a) => ({
      ...at(a.range?.[0] ?? 0),
      message:
        `invalid YAML: *${a.source} starts with *, so YAML reads it as an alias of an anchor ` +
        `that does not exist; if it is a path or glob, put it in quotes: ${JSON.stringify(`*${a.source}`)}`,
    }));
    return { errors: sortErrors(dedupe(errors)), warnings };
  }

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    if (err instanceof ReferenceError) {
      const alias = aliases[0];
      const pos = alias?.range ? at(alias.range[0]) : { file, line: 1, column: 1 };
      const message =
        `aliases expand to too much data (over ${MAX_ALIAS_COUNT} expansions, as in a ` +
        '"billion laughs" file); write the values out instead of nesting aliases';
      return { errors: [{ ...pos, message }], warnings };
    }
    throw err;
  }

  const locate = new Locator(doc, at, file);
  const validate = validateSchema;
  if (!validate(data)) {
    const errors = schemaErrors(validate.errors ?? [], data, locate);
    return { errors: sortErrors(dedupe(errors)), warnings };
  }

  const policy = build(data, locate, file, createHash('sha256').update(text).digest('hex'));
  return { policy, errors: [], warnings };
}

function tooBigMessage(size: number): string {
  const mib = (size / MAX_POLICY_BYTES).toFixed(1);
  const shown = mib === '1.0' ? `${size} bytes` : `${mib} MiB`;
  return `file is ${shown}; a policy file may be at most 1 MiB (split it with include)`;
}

/** The offset of the first byte that is not part of well-formed UTF-8, or -1. */
function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      i += 1;
      continue;
    }
    let n: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= n; k++) {
      const d = b[i + k];
      const [min, max] = k === 1 ? [lo, hi] : [0x80, 0xbf];
      if (d === undefined || d < min || d > max) return i;
    }
    i += n + 1;
  }
  return -1;
}

function invalidUtf8Error(b: Buffer, offset: number, file: string): PolicyError {
  const lineStart = b.lastIndexOf(0x0a, offset - 1) + 1;
  let line = 1;
  for (let i = 0; i < lineStart; i++) if (b[i] === 0x0a) line += 1;
  const column = b.toString('utf8', lineStart, offset).length + 1;
  const hex = b[offset]!.toString(16).padStart(2, '0');
  const message = `not valid UTF-8 (byte 0x${hex}); save the file as UTF-8`;
  return { file, line, column, message };
}

/** One line, no trailing period or colon. */
function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim().replace(/[.:]$/, '');
}

function lowerFirst(s: string): string {
  return /^[A-Z][a-z]/.test(s) ? s[0]!.toLowerCase() + s.slice(1) : s;
}

const YAML_HINTS: Record<string, string> = {
  TAB_AS_INDENT: 'indent with spaces, never tabs',
  MISSING_CHAR: 'close every quote, [ and {',
  BAD_INDENT: 'indent the entries of one mapping or list by the same number of spaces',
  BLOCK_AS_IMPLICIT_KEY: 'is a ":" or a closing quote missing?',
  MULTILINE_IMPLICIT_KEY: 'a key must fit on one line; is a ":" or a closing quote missing?',
  UNEXPECTED_TOKEN: 'check the YAML syntax here',
  BAD_ALIAS: 'an alias is written *name and must follow an anchor &name',
  BAD_DQ_ESCAPE: 'inside "double quotes" write a backslash as \\\\, or use single quotes',
  BLOCK_IN_FLOW: 'inside [ ] and { } write everything on one line, or use indented "- " lines',
  KEY_OVER_1024_CHARS: 'shorten the key',
};

function yamlError(
  e: YAMLError,
  doc: Document,
  source: string,
  at: (offset: number) => Pos,
): PolicyError {
  const start = e.pos[0];
  const raw = oneLine(e.message);
  if (/call stack/i.test(raw)) {
    return {
      ...at(start),
      message: 'invalid YAML: nested too deeply; a policy needs a few levels',
    };
  }
  switch (e.code) {
    case 'MULTIPLE_DOCS':
      return {
        ...at(start),
        message:
          'a second YAML document starts here; a policy file holds one: remove the "---" line, ' +
          'or move the rest to its own file listed under include',
      };
    case 'MISSING_CHAR': {
      const quote = /closing (["'])quote/.exec(raw)?.[1];
      if (quote !== undefined) {
        const open = openingQuote(source, start, quote);
        return {
          ...at(open),
          message: `invalid YAML: this ${quote}quote is never closed; add the closing ${quote}`,
        };
      }
      break;
    }
    case 'BAD_INDENT': {
      const flow = /end with an? ([\]}])/.exec(raw)?.[1];
      const open = flow === undefined ? undefined : unclosedFlow(doc.contents, start);
      if (flow !== undefined && open !== undefined) {
        const what = flow === '}' ? '{ mapping }' : '[ list ]';
        return {
          ...at(open),
          message: `invalid YAML: this ${what} is never closed; end it with ${flow} on the same line`,
        };
      }
      break;
    }
    case 'TAB_AS_INDENT':
      return {
        ...at(start),
        message: `invalid YAML: a tab used for indentation; indent with spaces`,
      };
    default:
      break;
  }
  const hint = YAML_HINTS[e.code] ?? 'fix the YAML syntax here';
  return { ...at(start), message: `invalid YAML: ${lowerFirst(raw)}; ${hint}` };
}

function yamlWarning(w: YAMLError): string {
  if (w.code === 'TAG_RESOLVE_FAILED') {
    return `${lowerFirst(oneLine(w.message))}; the tag is ignored: remove it`;
  }
  return `YAML: ${lowerFirst(oneLine(w.message))}`;
}

/** The start of the flow collection (`{...}`, `[...]`) left open where an error at `end` was found. */
function unclosedFlow(node: unknown, end: number): number | undefined {
  if (!isMap(node) && !isSeq(node)) return undefined;
  if (node.flow && node.range?.[1] === end) return node.range[0];
  const children: unknown[] = isMap(node) ? node.items.map((p) => p.value) : node.items;
  for (const child of children) {
    const found = unclosedFlow(child, end);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The offset of the quote that opens the unclosed scalar ending at `end`. */
function openingQuote(source: string, end: number, quote: string): number {
  let i = Math.min(end, source.length) - 1;
  while (i >= 0) {
    if (source[i] === quote) {
      if (quote === "'" && source[i - 1] === "'") {
        i -= 2;
        continue;
      }
      let backslashes = 0;
      while (quote === '"' && source[i - 1 - backslashes] === '\\') backslashes += 1;
      if (backslashes % 2 === 0) return i;
    }
    i -= 1;
  }
  return end;
}

interface BadKey {
  node: AnyNode;
  segs: Segment[];
  duplicate: boolean;
}

/** Keys written twice in one mapping, and keys that are mappings or lists (`? [a]: x`). */
function badKeys(doc: Document, node: unknown, segs: Segment[], out: BadKey[]): BadKey[] {
  if (isMap(node)) {
    // Compared as toJS names them: `1` and "1" are one key of a JavaScript object.
    const seen = new Set<string>();
    for (const pair of node.items) {
      const key: unknown = isAlias(pair.key) ? pair.key.resolve(doc) : pair.key;
      if (isMap(key) || isSeq(key)) {
        out.push({ node: pair.key as AnyNode, segs, duplicate: false });
        continue;
      }
      const name = keyString(key);
      const path = [...segs, name];
      if (seen.has(name)) out.push({ node: pair.key as AnyNode, segs: path, duplicate: true });
      seen.add(name);
      badKeys(doc, pair.value, path, out);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => badKeys(doc, item, [...segs, i], out));
  }
  return out;
}

/** Every alias node in document order, without following them. */
function collectAliases(node: unknown, out: Alias[]): Alias[] {
  if (isAlias(node)) out.push(node);
  else if (isMap(node)) {
    for (const pair of node.items) {
      collectAliases(pair.key, out);
      collectAliases(pair.value, out);
    }
  } else if (isSeq(node)) {
    for (const item of node.items) collectAliases(item, out);
  }
  return out;
}

/** A mapping key as `toJS` names it (an empty key is ""). */
function keyString(key: unknown): string {
  const value: unknown = isScalar(key) ? key.value : key;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // null names the empty key; collection keys are reported apart (badKeys).
  return value === null || value === undefined ? '' : typeof value;
}

/** Finds the YAML node for a data path, and turns offsets into positions. */
class Locator {
  private readonly keys = new WeakMap<YAMLMap, Map<string, Pair>>();

  constructor(
    private readonly doc: Document,
    readonly at: (offset: number) => Pos,
    private readonly file: string,
  ) {}

  /** The pair for `key` in `map`; indexed once per map, so that big files stay linear. */
  private pair(map: YAMLMap, key: string): Pair | undefined {
    let index = this.keys.get(map);
    if (index === undefined) {
      index = new Map();
      for (const p of map.items) {
        const k = keyString(p.key);
        if (!index.has(k)) index.set(k, p);
      }
      this.keys.set(map, index);
    }
    return index.get(key);
  }

  /** The node at `segs` (following aliases) and the key node that leads to it. */
  find(segs: readonly Segment[]): { node: unknown; key: AnyNode | undefined; found: boolean } {
    let node: unknown = this.doc.contents;
    let key: AnyNode | undefined;
    for (const seg of segs) {
      if (isAlias(node)) node = node.resolve(this.doc);
      if (isMap(node)) {
        const pair = this.pair(node, String(seg));
        if (!pair) return { node, key, found: false };
        key = (pair.key as AnyNode | null) ?? undefined;
        node = pair.value ?? undefined;
      } else if (isSeq(node)) {
        const item: unknown = node.items[Number(seg)];
        if (item === undefined) return { node, key, found: false };
        key = undefined;
        node = item;
      } else {
        return { node, key, found: false };
      }
    }
    return { node, key, found: true };
  }

  /** The position of the value at `segs`; for an empty value, of its key. */
  value(segs: readonly Segment[]): Pos {
    const { node, key } = this.find(segs);
    const range = (node as AnyNode | undefined)?.range;
    const empty = isScalar(node) && node.value === null && range?.[0] === range?.[1];
    if (empty && key?.range) return this.at(key.range[0]);
    if (range) return this.at(range[0]);
    if (key?.range) return this.at(key.range[0]);
    return this.start();
  }

  /** The position of the key that leads to `segs` (the value's if it has no key). */
  key(segs: readonly Segment[]): Pos {
    const { key, found } = this.find(segs);
    if (found && key?.range) return this.at(key.range[0]);
    return this.value(segs);
  }

  start(): Pos {
    return { file: this.file, line: 1, column: 1 };
  }
}

/** `servers.filesystem.roots[2].readonly`; odd names in brackets: `servers["*"]`. */
function dotted(segs: readonly Segment[]): string {
  let out = '';
  for (const seg of segs) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (seg.length > 48) out += `[${JSON.stringify(`${seg.slice(0, 40)}…`)}]`;
    else if (/^[\p{L}\p{N}_-]+$/u.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** Split an ajv instancePath into segments, numbering the indexes of arrays in `data`. */
function segments(instancePath: string, data: unknown): Segment[] {
  if (instancePath === '') return [];
  const out: Segment[] = [];
  let cur: unknown = data;
  for (const part of instancePath.slice(1).split('/')) {
    const seg = part.replace(/~1/g, '/').replace(/~0/g, '~');
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

function schemaErrors(errors: ErrorObject[], data: unknown, locate: Locator): PolicyError[] {
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

function errorAt(file: string, line: number, column: number, message: string): PolicyError {
  return { file, line, column, message };
}

function dedupe(errors: PolicyError[]): PolicyError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const k = `${e.line}:${e.column}:${e.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Sort by position, keeping the first MAX_ERRORS and a note of how many more there are. */
function sortErrors(errors: PolicyError[]): PolicyError[] {
  const sorted = errors.sort((a, b) => a.line - b.line || a.column - b.column);
  const next = sorted[MAX_ERRORS];
  if (next === undefined) return sorted;
  const more = sorted.length - MAX_ERRORS;
  const message = `${more} more error${more === 1 ? '' : 's'} not shown; fix the ones above first`;
  return [...sorted.slice(0, MAX_ERRORS), { ...next, message }];
}

function build(data: RawPolicy, locate: Locator, file: string, sha256: string): ParsedPolicyFile {
  const deny = (list: RawDeny[] | undefined, base: Segment[]): DenyEntry[] =>
    (list ?? []).map((d, i) =>
      typeof d === 'string'
        ? { path: d, access: 'all', pos: locate.value([...base, i]) }
        : { path: d.path, access: d.access ?? 'all', pos: locate.value([...base, i]) },
    );

  const servers: ServerBlock[] = [];
  for (const pattern of serverOrder(data, locate)) {
    const raw = data.servers?.[pattern];
    if (raw === undefined) continue;
    const base: Segment[] = ['servers', pattern];
    const block: ServerBlock = {
      pattern,
      pos: locate.key(base),
      roots: (raw.roots ?? []).map((r, i) => rootEntry(r, [...base, 'roots', i], locate)),
      deny: deny(raw.deny, [...base, 'deny']),
      tools: Object.fromEntries(
        Object.entries(raw.tools ?? {}).map(([name, rule]) => [name, toolRule(rule)]),
      ),
    };
    if (raw.readOnly !== undefined) block.readOnly = raw.readOnly;
    if (raw.launch !== undefined) block.launch = structuredClone(raw.launch);
    if (raw.sandbox !== undefined && raw.sandbox !== false) {
      const sb = raw.sandbox === true ? {} : raw.sandbox;
      block.sandbox = { read: [...(sb.read ?? [])], write: [...(sb.write ?? [])] };
      if (sb.network !== undefined) block.sandbox.network = sb.network;
    }
    servers.push(block);
  }

  return {
    file,
    sha256,
    include: (data.include ?? []).map((pattern, i) => ({
      pattern,
      pos: locate.value(['include', i]),
    })),
    defaults: { readOnly: data.defaults?.readOnly ?? false },
    deny: deny(data.deny, ['deny']),
    servers,
  };
}

/** Server names in the order written (a JS object would put integer-like names first). */
function serverOrder(data: RawPolicy, locate: Locator): string[] {
  const names = Object.keys(data.servers ?? {});
  const { node } = locate.find(['servers']);
  if (!isMap(node)) return names;
  const known = new Set(names);
  const written = node.items.map((p) => keyString(p.key)).filter((k) => known.has(k));
  return [...new Set([...written, ...names])];
}

function rootEntry(r: RawRoot, segs: Segment[], locate: Locator): RootEntry {
  const entry: RootEntry = {
    path: r.path,
    pos: locate.value(segs),
    pathPos: locate.value([...segs, 'path']),
  };
  if (r.name !== undefined) entry.name = r.name;
  if (r.readOnly !== undefined) entry.readOnly = r.readOnly;
  if (r.expires !== undefined) entry.expires = parseRfc3339(r.expires);
  if (r.kind !== undefined) entry.kind = r.kind;
  return entry;
}

function toolRule(rule: ToolRule): ToolRule {
  const out: ToolRule = {};
  if (rule.paths !== undefined) out.paths = [...rule.paths];
  if (rule.readOnly !== undefined) out.readOnly = rule.readOnly;
  return out;
}
