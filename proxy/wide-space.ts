/**
 * White space as the widest server reader takes it: JavaScript's `\s`, and what Python's
 * `str.strip()` (and so `urllib`'s `unwrap`) also takes, U+0085 and U+001C to U+001F. A path or
 * URI trimmed with less than this is not the one such a server opens.
 */
/* eslint-disable no-control-regex -- U+001C to U+001F are white space to Python */
export const WIDE_SPACE = /[\s\u0085\u001c-\u001f]/;
const AROUND = /^[\s\u0085\u001c-\u001f]+|[\s\u0085\u001c-\u001f]+$/g;
/* eslint-enable no-control-regex */

/** `text` without the wide white space around it. */
export function trimWide(text: string): string {
  return text.replace(AROUND, '');
}
