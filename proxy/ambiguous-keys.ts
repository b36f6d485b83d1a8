/**
 * Object keys that another JSON reader may take for a different member than `JSON.parse` does.
 * The proxy checks what `JSON.parse` reads: the last of a repeated key, keys compared exactly. A
 * server may read the same bytes otherwise: a reader that keeps the first of a repeated key;
 * Go's `encoding/json` (the Go MCP SDK before 1.3.1, and Go servers' own argument structs), which
 * matches a key to a member without regard to case and folds `ſ` to `s`, `K` (Kelvin) to `k`, `İ`
 * to `i`; a reader that took a key with NUL appended for the key itself (the Go MCP SDK up to
 * 1.4.0); one that turns a lone surrogate into U+FFFD; Python models (pydantic) with snake_case
 * fields under camelCase aliases and `populate_by_name`, where `meta` fills `_meta` and
 * `request_id` fills `requestId`. In any of these, a line could mean one call to the proxy and
 * another to the server, so such a line is refused, whatever it carries.
 */

/**
 * Members a peer reads by name, at the levels where they mean something to every MCP reader:
 * 2025-era members and those MCP 2026-07-28 added (a retry's `inputResponses` and `requestState`,
 * the `subscriptions/listen` filter, the per-request `_meta` members and a stream's id).
 */
const ENVELOPE: Record<string, readonly string[]> = {
  message: ['jsonrpc', 'id', 'method', 'params', 'result', 'error'],
  params: [
    '_meta',
    'name',
    'arguments',
    'uri',
    'requestId',
    // A notifications/progress names its token here; a request names it in _meta.
    'progressToken',
    'cursor',
    'protocolVersion',
    'capabilities',
    'clientInfo',
    // logging/setLevel: the proxy answers it and keeps the level.
    'level',
    // 2026-07-28: where the proxy puts the policy's roots in place of the host's.
    'inputResponses',
    'requestState',
    // 2026-07-28: what a subscriptions/listen stream (and its acknowledgement) carries.
    'notifications',
    // completion/complete: what the proxy checks as paths.
    'ref',
    'argument',
    'context',
  ],
  _meta: [
    'progressToken',
    'io.modelcontextprotocol/protocolVersion',
    'io.modelcontextprotocol/clientCapabilities',
    'io.modelcontextprotocol/clientInfo',
    'io.modelcontextprotocol/logLevel',
    'io.modelcontextprotocol/subscriptionId',
  ],
  // The answers in a 2026-07-28 retry, under names the server chose: no member of their own.
  inputResponses: [],
  // One answer: the proxy replaces a roots answer by its `roots`.
  inputResponse: ['roots'],
  // A subscriptions/listen filter: the proxy checks the resources it subscribes to.
  notifications: [
    'toolsListChanged',
    'promptsListChanged',
    'resourcesListChanged',
    'resourceSubscriptions',
  ],
  // completion/complete: the prompt or resource template, the argument completed, those given.
  ref: ['type', 'name', 'uri'],
  argument: ['name', 'value'],
  context: ['arguments'],
};

// eslint-disable-next-line no-control-regex -- NUL is what this excludes
const PLAIN_ASCII = /^[\u0001-\u007f]*$/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Orbits of Unicode's simple case folding whose members have no one-code-point upper case, so
 * that lower-then-upper case leaves them apart; Go folds each to its least member.
 */
const GO_ONLY_FOLDS = new Map([
  ['\u1fd3', '\u0390'],
  ['\u1fe3', '\u03b0'],
  ['\ufb06', '\ufb05'],
]);

/** One code point folded: simple lower case, then simple upper case, one code point each. */
function foldCodePoint(c: string): string {
  const go = GO_ONLY_FOLDS.get(c);
  if (go !== undefined) return go;
  const lower = [...c.toLowerCase()];
  const l = lower.length === 1 ? lower[0]! : (lower[0] ?? c);
  const upper = [...l.toUpperCase()];
  return upper.length === 1 ? upper[0]! : l;
}

/** Folds already worked out: a long key of one letter costs one lookup per code point. */
const FOLDED = new Map<string, string>();

/** The fold of each code point on its own: the reference `looseKey` must agree with. */
export function foldEach(key: string): string {
  const out: string[] = [];
  for (const c of key.replace(/\0/g, '').replace(LONE_SURROGATE, '\ufffd')) {
    let folded = FOLDED.get(c);
    if (folded === undefined) {
      folded = foldCodePoint(c);
      // Bounded: at most every code point there is, and in practice a few hundred.
      FOLDED.set(c, folded);
    }
    out.push(folded);
  }
  return out.join('');
}

/** Marks a code point whose fold is not one code point of the same UTF-16 length (or is NUL). */
const APART = 0x110000;
/** The fold of each BMP code unit seen so far, plus one (0: not yet worked out), or APART. */
const BMP_FOLDS = new Uint32Array(0x10000);
/** Per astral plane, made when one of its code points is first seen: as BMP_FOLDS. */
const PLANE_FOLDS: (Uint32Array | undefined)[] = [];

/** `cp`'s fold as one code point of the same UTF-16 length, or APART. */
function foldOf(cp: number): number {
  if (cp === 0) return APART;
  const folded = foldCodePoint(String.fromCodePoint(cp));
  const f = folded.codePointAt(0)!;
  const sameLength = folded.length === (cp > 0xffff ? 2 : 1) && f > 0xffff === cp > 0xffff;
  return sameLength ? f : APART;
}

/** UTF-16 code units of a fold, reused from key to key (grown for a longer key). */
let units = new Uint16Array(256);
const UTF16 = new TextDecoder('utf-16le');

/**
 * A key as the loosest reader above matches it: NULs dropped, lone surrogates as U+FFFD, and each
 * code point folded as Go folds it (`ſ` → `S`, `K` → `K`, `İ` → `I`, `ΐ` (U+1FD3) → `ΐ` (U+0390)).
 * One pass over the key's code units with each code point's fold looked up in a table filled as
 * code points are first seen: the cost is linear, a few nanoseconds a code unit, whatever the
 * script (the engine's own case mapping costs ten times that for Greek). A key with a NUL, a lone
 * surrogate or a code point whose fold has another length is folded by `foldEach`.
 */
export function looseKey(key: string): string {
  // Most keys: ASCII without NUL, where folding is upper case.
  if (PLAIN_ASCII.test(key)) return key.toUpperCase();
  const n = key.length;
  if (units.length < n) units = new Uint16Array(Math.max(n, units.length * 2));
  let changed = false;
  for (let i = 0; i < n; i++) {
    const c = key.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) {
      const low = key.charCodeAt(i + 1);
      if (c > 0xdbff || !(low >= 0xdc00 && low <= 0xdfff)) return foldEach(key);
      const cp = (c - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
      const plane = (PLANE_FOLDS[cp >> 16] ??= new Uint32Array(0x10000));
      const known = plane[cp & 0xffff]!;
      const g = known === 0 ? (plane[cp & 0xffff] = foldOf(cp) + 1) - 1 : known - 1;
      if (g === APART) return foldEach(key);
      if (g !== cp) changed = true;
      units[i] = 0xd800 + ((g - 0x10000) >> 10);
      units[++i] = 0xdc00 + ((g - 0x10000) & 0x3ff);
      continue;
    }
    const known = BMP_FOLDS[c]!;
    const f = known === 0 ? (BMP_FOLDS[c] = foldOf(c) + 1) - 1 : known - 1;
    if (f === APART) return foldEach(key);
    if (f !== c) changed = true;
    units[i] = f;
  }
  return changed ? UTF16.decode(units.subarray(0, n)) : key;
}

/**
 * A key as it may name an envelope member: loosely, and without underscores, since a Python model
 * that fills its field `request_id` from the alias `requestId` fills it from `request_id` too
 * (and `meta` from `meta` beside the alias `_meta`). Only envelope members are compared so: inside
 * a tool's arguments `file_path` and `filepath` are two names, which a Go reader keeps apart.
 */
function envelopeKey(key: string): string {
  return looseKey(key.replace(/_/g, ''));
}

const LOOSE_ENVELOPE = Object.fromEntries(
  Object.entries(ENVELOPE).map(([level, names]) => [
    level,
    new Map(names.map((n) => [envelopeKey(n), n])),
  ]),
);

const QUOTE = 0x22;
const COMMA = 0x2c;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/**
 * The end (one past the closing quote) of the string that opens at `i`. In a line of one-byte
 * characters the engine's search for `"` is exact and fastest; in a line that holds any other
 * character it searches for the quote's low byte and stops at every character whose low byte is
 * `"` (U+4E22 `丢` and every U+xx22, which an agent can fill a line with), so such a line is
 * read one code unit at a time instead (`wide`), and so is a string with an escape before its
 * first quote.
 */
function stringEnd(text: string, i: number, wide: boolean): number {
  if (wide) {
    const n = text.length;
    for (let j = i + 1; j < n; j++) {
      const c = text.charCodeAt(j);
      if (c === QUOTE) return j + 1;
      if (c === BACKSLASH) j++;
    }
    return n;
  }
  const quote = text.indexOf('"', i + 1);
  if (quote === -1) return text.length;
  if (text.charCodeAt(quote - 1) !== BACKSLASH) return quote + 1;
  // A backslash before the first quote (escaped, or the end of `\\`): the string is read one
  // code unit at a time from its start. Searching on from each escaped quote cost a call per
  // `\"`, which a key made of them (an agent's choice) turned into 3.5 × `JSON.parse`.
  return stringEnd(text, i, true);
}

/** A character beyond one byte: the line is held as two-byte text. */
// eslint-disable-next-line no-control-regex -- the range starts at NUL
const WIDE = /[^\u0000-\u00ff]/;

interface Frame {
  /** Loose key → the key as written; undefined for an array. */
  keys: Map<string, string> | undefined;
  /** The frame it is in, and its name there (`[]` in an array): its path, for a message only. */
  parent: Frame | undefined;
  name: string;
  /** Which envelope level it is, if any. */
  level: string | undefined;
  /** The last key read: the name of the value that follows. */
  last: string;
  expectKey: boolean;
}

const LOOSE_READER =
  "a reader that matches keys loosely (Go's encoding/json ignores case and folds ſ and K; " +
  'Python models fill `request_id` from `requestId`)';

/** Where a frame is, as `params.arguments.x[]`; worked out only for a refusal. */
function describe(frame: Frame): string {
  const names: string[] = [];
  for (let f: Frame | undefined = frame; f?.parent !== undefined; f = f.parent) names.push(f.name);
  names.reverse();
  // A path thousands of levels deep is shown by its ends.
  if (names.length > 8) names.splice(4, names.length - 8, '…');
  let where = '';
  for (const name of names) where += where === '' || name === '[]' ? name : `.${name}`;
  return where === '' ? 'the message' : where;
}

/** Members of `params` whose own members are read by name: each is a level of its own. */
const LEVELS_IN_PARAMS = new Set(['notifications', 'ref', 'argument', 'context']);

/** The envelope level of the object under `key` in an object of level `parent`. */
function childLevel(parent: string | undefined, key: string): string | undefined {
  if (parent === 'message' && key === 'params') return 'params';
  if (parent === 'params' && key === '_meta') return '_meta';
  if (parent === 'params' && key === 'inputResponses') return 'inputResponses';
  if (parent === 'inputResponses') return 'inputResponse';
  if (parent === 'params' && LEVELS_IN_PARAMS.has(key)) return key;
  return undefined;
}

/** Check one key of `frame`; a problem's description, or undefined. */
function keyProblem(frame: Frame, key: string): string | undefined {
  const loose = looseKey(key);
  const seen = frame.keys!.get(loose);
  if (seen === key) {
    return `the key ${JSON.stringify(key)} appears twice in ${describe(frame)}: JSON.parse keeps the last, some readers the first`;
  }
  if (seen !== undefined) {
    return `the keys ${JSON.stringify(seen)} and ${JSON.stringify(key)} in ${describe(frame)} are one key to ${LOOSE_READER}`;
  }
  frame.keys!.set(loose, key);
  // A member JavaScript readers that copy the object (the v2 server SDK copies the answers
  // one by one) make its prototype, whose members the reader then finds by any name: the
  // host's roots under `where` behind `inputResponses.__proto__` (an attacker pass).
  if (frame.level !== undefined && key === '__proto__') {
    return `the key "__proto__" in ${describe(frame)} is the object's prototype to a JavaScript reader that copies it, not a member`;
  }
  const member =
    frame.level === undefined ? undefined : LOOSE_ENVELOPE[frame.level]!.get(envelopeKey(key));
  if (member !== undefined && member !== key) {
    return `the key ${JSON.stringify(key)} in ${describe(frame)} is ${JSON.stringify(member)} to ${LOOSE_READER}`;
  }
  return undefined;
}

/**
 * Why the JSON text `text` (already accepted by `JSON.parse`) could read differently to another
 * reader, or undefined. `envelopeOnly` looks only at the message, its params and their `_meta`
 * (what every reader reads by name), not into values such as a tool's arguments or a log's data.
 * Iterative, so that no nesting depth can exhaust the stack.
 */
export function ambiguousKeys(text: string, envelopeOnly = false): string | undefined {
  const stack: Frame[] = [];
  let top: Frame | undefined;
  const wide = WIDE.test(text);
  for (let i = 0; i < text.length; i++) {
    // Char codes, not one-character strings: the loop visits every byte outside strings.
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i, wide);
      if (top?.keys !== undefined && top.expectKey) {
        const raw = text.slice(i + 1, end - 1);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end)) as string) : raw;
        const problem = envelopeOnly && top.level === undefined ? undefined : keyProblem(top, key);
        if (problem !== undefined) return problem;
        top.last = key;
        top.expectKey = false;
      }
      i = end - 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      let level: string | undefined;
      if (top === undefined) level = c === OPEN_OBJECT ? 'message' : undefined;
      else if (top.keys !== undefined && c === OPEN_OBJECT) level = childLevel(top.level, top.last);
      top = {
        keys: c === OPEN_OBJECT ? new Map() : undefined,
        parent: top,
        name: top?.keys === undefined ? '[]' : top.last,
        level,
        last: '',
        expectKey: true,
      };
      stack.push(top);
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      stack.pop();
      top = stack[stack.length - 1];
    } else if (c === COMMA && top?.keys !== undefined) {
      top.expectKey = true;
    }
  }
  return undefined;
}
