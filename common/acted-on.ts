/**
 * What a terminal acts on or reorders rather than shows, and its escape: one definition for every
 * log and output that may carry a name an agent chose (a directory, a server's URI) to a terminal
 * or to `journalctl`. C0 and DEL, the C1 controls (8-bit CSI/OSC on some terminals), the line
 * separators and the bidi controls each become a JSON escape (`\n`, `\u001b`, `\u202e`).
 */

/**
 * What a terminal would act on or reorder, rather than show, and what it shows as nothing (the
 * zero-width space and joiners, the soft hyphen, the word joiner and invisible operators, the
 * byte order mark, the Hangul fillers): `docs` with a zero-width space after it is another
 * directory that reads exactly as `docs`.
 */
export const ACTED_ON =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\u3164\ufeff\uffa0]/g;

/** What JSON.stringify writes raw that a terminal acts on or shows as nothing (it escapes C0 itself). */
export const RAW_IN_JSON =
  /[\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\u3164\ufeff\uffa0]/g;

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

/**
 * What a person reading a question cannot see, or sees as something else: controls and format
 * characters (bidi overrides and isolates, zero-width space and joiners, the byte order mark,
 * tag characters), private-use and unassigned code points, line and paragraph separators, every
 * space but the plain one (a no-break space passes for one), the fillers that show as nothing,
 * and the marks that show as nothing though Unicode counts them as combining (the combining
 * grapheme joiner, variation selectors, the Mongolian free variation selectors, the Khmer
 * inherent vowels). `docs\u200b` looks exactly like `docs`, and a grant of one is not a grant of the other.
 */
const UNSEEN =
  /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\u115f\u1160\u2800\u3164\uffa0]|(?! )\p{Zs}|\u034f|[\u17b4\u17b5]|[\u180b-\u180f]|[\ufe00-\ufe0f]|[\u{e0100}-\u{e01ef}]/gu;

/**
 * JSON text (from JSON.stringify) in which a person sees every character: each one in `UNSEEN`
 * becomes its `\uXXXX` escape (a pair for one beyond the BMP), which any JSON reader takes as
 * the same string.
 */
export function jsonUnseenEscaped(json: string): string {
  return json.replace(UNSEEN, (c) =>
    Array.from(
      { length: c.length },
      (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`,
    ).join(''),
  );
}
