/**
 * What the first bytes of a line over the cap say about it (line-splitter.ts keeps only those):
 * its id and whether it is a request, a notification or an answer, so that the proxy can refuse
 * it with a JSON-RPC error its sender can match. Only members read whole within the head count;
 * an id that is not there, or that appears twice under any spelling a loose reader takes for
 * `id`, is unknown (the error then goes under a null id, or nowhere).
 */
import { looseKey } from './ambiguous-keys.js';

export interface LineHead {
  /** The id as written, when the head holds it whole and once. */
  idText: string | undefined;
  /** The method, when the head holds it whole. */
  method: string | undefined;
  /** The head names `result` or `error`: an answer. */
  answer: boolean;
}

const SCALAR = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|null|true|false)/;

/** The end (one past the closing quote) of the string at `i`, or -1 if the head cuts it. */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x22) return j + 1;
    if (c === 0x5c) j++;
  }
  return -1;
}

/**
 * An id written last, after a result the head cannot see past (the TypeScript SDK writes
 * `{"result":…,"jsonrpc":"2.0","id":1}`): the line's end must be `"id":<value>}`, optionally
 * followed by `"jsonrpc":"2.0"`, with one closing brace.
 */
const TRAILING_ID =
  /[,{]\s*"id"\s*:\s*(-?\d[\d.eE+-]*|"(?:[^"\\]|\\.)*")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$/;

/**
 * What an over-long line's first and last bytes say: its members as far as the head goes, and an
 * id written at its end. Two different ids (head and tail) are nobody's.
 */
export function lineEnds(head: Buffer, tail: Buffer): LineHead {
  const out = lineHead(head);
  // The last 1 KiB only: a longer id is unknown, and the pattern never runs over much text.
  const end = tail.toString('utf8', Math.max(0, tail.length - 1024));
  const last = TRAILING_ID.exec(end)?.[1];
  if (last === undefined) return out;
  if (out.idText === undefined && !/"id"\s*:/.test(head.toString('utf8'))) out.idText = last;
  else if (out.idText !== last) out.idText = undefined;
  return out;
}

/** The top-level members of the object that opens `head`, as far as it goes. */
export function lineHead(head: Buffer): LineHead {
  const text = head.toString('utf8');
  const out: LineHead = { idText: undefined, method: undefined, answer: false };
  let ids = 0;
  let i = text.search(/\S/);
  if (i === -1 || text[i] !== '{') return out;
  i++;
  for (;;) {
    while (/\s|,/.test(text[i] ?? '')) i++;
    if (text[i] !== '"') return finish(out, ids);
    const keyEnd = stringEnd(text, i);
    if (keyEnd === -1) return finish(out, ids);
    let key: string;
    try {
      key = JSON.parse(text.slice(i, keyEnd)) as string;
    } catch {
      return finish(out, ids);
    }
    i = keyEnd;
    while (/\s/.test(text[i] ?? '')) i++;
    if (text[i] !== ':') return finish(out, ids);
    i++;
    while (/\s/.test(text[i] ?? '')) i++;
    const valueStart = i;
    const c = text[i];
    if (c === '"') {
      i = stringEnd(text, i);
    } else if (c === '{' || c === '[') {
      i = containerEnd(text, i);
    } else {
      const m = SCALAR.exec(text.slice(i, i + 400));
      i = m === null ? -1 : i + m[0].length;
    }
    const loose = looseKey(key.replace(/_/g, ''));
    if (loose === 'ID') ids++;
    if (loose === 'RESULT' || loose === 'ERROR') out.answer = true;
    if (i === -1) return finish(out, ids);
    const value = text.slice(valueStart, i);
    if (key === 'id' && (c === '"' || (c !== undefined && /[-\d]/.test(c)))) out.idText = value;
    if (key === 'method' && c === '"') out.method = JSON.parse(value) as string;
  }
}

/** One past the end of the object or array at `i`, or -1 if the head cuts it. */
function containerEnd(text: string, i: number): number {
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (c === '"') {
      j = stringEnd(text, j) - 1;
      if (j < 0) return -1;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return -1;
}

/** An id read under two spellings is nobody's. */
function finish(out: LineHead, ids: number): LineHead {
  if (ids !== 1) out.idText = undefined;
  return out;
}
