/**
 * Text from elsewhere (a log file, a daemon's answer) as it may reach a terminal. A terminal acts
 * on more than C0 controls: ESC starts sequences that move the cursor, retitle the window or
 * write the clipboard (OSC 52); C1 controls (U+0080–U+009F) do the same on terminals that take
 * them as 8-bit CSI/OSC; CR and the line separators overwrite or forge rows; the bidi controls
 * reorder what is shown, so `…/evil‮txt.exe` reads as something else. Every such character is
 * shown as a JSON escape (`\u001b`, `\n`), as `log` always showed a newline in a path: plainly
 * not part of the name, and the same spelling in the table and in `--json`.
 */

/** What a terminal would act on or reorder, rather than show. */
const ACTED_ON =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** One escape, as JSON writes it (`\n`, `\u001b`). */
function escapeOne(c: string): string {
  const json = JSON.stringify(c);
  // JSON.stringify leaves C1, bidi and separators as they are: spell those out.
  return json.length > 3
    ? json.slice(1, -1)
    : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * `text` for a table cell or a message: what a terminal would act on is escaped, and so is a
 * backslash, so that an escape shown can only have come from this function.
 */
export function visibleText(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(ACTED_ON, escapeOne);
}

/**
 * `value` as one JSON line that is safe on a terminal: JSON.stringify escapes C0 controls but
 * writes C1, bidi controls and U+2028/U+2029 raw; those become `\uXXXX` too, which any JSON
 * reader takes as the same string.
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value).replace(ACTED_ON, escapeOne);
}

/** At most `max` characters of `text` for a message, saying how much was left out. */
export function clipped(text: string, max = 200): string {
  return text.length <= max
    ? text
    : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}
