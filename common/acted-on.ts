/**
 * What a terminal acts on or reorders rather than shows, and its escape: one definition for every
 * log and output that may carry a name an agent chose (a directory, a server's URI) to a terminal
 * or to `journalctl`. C0 and DEL, the C1 controls (8-bit CSI/OSC on some terminals), the line
 * separators and the bidi controls each become a JSON escape (`\n`, `\u001b`, `\u202e`).
 */

/** What a terminal would act on or reorder, rather than show. */
export const ACTED_ON =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** What JSON.stringify writes raw that a terminal acts on (it escapes C0 itself). */
export const RAW_IN_JSON =
  /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** One escape, as JSON writes it (`\n`, `\u001b`). */
export function escapeOne(c: string): string {
  const json = JSON.stringify(c);
  // JSON.stringify leaves C1, bidi and separators as they are: spell those out.
  return json.length > 3
    ? json.slice(1, -1)
    : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `text` on one line with nothing a terminal acts on: each such character escaped. */
export function actedOnEscaped(text: string): string {
  return text.replace(ACTED_ON, escapeOne);
}

/** JSON text (from JSON.stringify) with what it leaves raw escaped too; any reader reads the same. */
export function jsonActedOnEscaped(json: string): string {
  return json.replace(RAW_IN_JSON, escapeOne);
}
