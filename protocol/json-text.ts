/** Read and edit members of a JSON object's text without re-serialising the rest (ids above 2^53 survive). */

/** Where one member's value lies in the text: `text.slice(start, end)`. */
interface MemberSpan {
  /** Where the member's key begins. */
  keyStart: number;
  start: number;
  end: number;
}

function skipWs(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    // space, tab, LF, CR: JSON's only whitespace
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    i++;
  }
  return i;
}

function skipString(text: string, i: number): number {
  // text[i] is the opening quote
  i++;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\') i += 2;
    else if (c === '"') return i + 1;
    else i++;
  }
  return i;
}

function skipValue(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return skipString(text, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    while (i < text.length) {
      const d = text[i];
      if (d === '"') {
        i = skipString(text, i);
        continue;
      }
      if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return i;
  }
  while (i < text.length && !',}] \t\r\n'.includes(text[i]!)) i++;
  return i;
}

/**
 * The value spans of the members of the object that `text` holds (valid JSON, already parsed once
 * by the caller). A repeated key keeps its last span, as `JSON.parse` does.
 */
function objectMembers(text: string): Map<string, MemberSpan> {
  const members = new Map<string, MemberSpan>();
  let i = skipWs(text, 0);
  if (text[i] !== '{') return members;
  i = skipWs(text, i + 1);
  while (i < text.length && text[i] === '"') {
    const keyStart = i;
    const keyEnd = skipString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipWs(text, keyEnd);
    i = skipWs(text, i + 1); // the colon
    const end = skipValue(text, i);
    members.set(key, { keyStart, start: i, end });
    i = skipWs(text, end);
    if (text[i] !== ',') break;
    i = skipWs(text, i + 1);
  }
  return members;
}

/** The exact text of member `key` of the object in `text`, or undefined. */
export function memberText(text: string, key: string): string | undefined {
  const span = objectMembers(text).get(key);
  return span === undefined ? undefined : text.slice(span.start, span.end);
}

/**
 * `text` with member `key` set to `valueText` (replaced in place, or added first); the rest
 * unchanged. A `text` that is no object (a request's `params: null`, which every reader takes for
 * none) becomes one holding that member alone: written into `null` it made a line no reader
 * could parse, and the request waited for an answer for good (an attacker pass).
 */
export function setMember(text: string, key: string, valueText: string): string {
  if (!text.trimStart().startsWith('{')) return `{${JSON.stringify(key)}:${valueText}}`;
  const span = objectMembers(text).get(key);
  if (span !== undefined) return text.slice(0, span.start) + valueText + text.slice(span.end);
  const open = text.indexOf('{');
  const afterOpen = skipWs(text, open + 1);
  const sep = text[afterOpen] === '}' ? '' : ',';
  return `${text.slice(0, open + 1)}${JSON.stringify(key)}:${valueText}${sep}${text.slice(open + 1)}`;
}

/** `text` without member `key` (and its comma); the rest unchanged. */
export function removeMember(text: string, key: string): string {
  const span = objectMembers(text).get(key);
  if (span === undefined) return text;
  let start = span.keyStart;
  let end = skipWs(text, span.end);
  if (text[end] === ',') end = skipWs(text, end + 1);
  else {
    // The last member: take the comma before it instead.
    let before = start - 1;
    while (before >= 0 && ' \t\r\n'.includes(text[before]!)) before--;
    if (text[before] === ',') start = before;
  }
  return text.slice(0, start) + text.slice(end);
}
