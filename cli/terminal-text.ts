/**
 * Text from elsewhere (a log file, a daemon's answer) as it may reach a terminal. A terminal acts
 * on more than C0 controls: ESC starts sequences that move the cursor, retitle the window or
 * write the clipboard (OSC 52); C1 controls (U+0080–U+009F) do the same on terminals that take
 * them as 8-bit CSI/OSC; CR and the line separators overwrite or forge rows; the bidi controls
 * reorder what is shown, so `…/evil‮txt.exe` reads as something else. Every such character is
 * shown as a JSON escape (`\u001b`, `\n`), as `log` always showed a newline in a path: plainly
 * not part of the name, and the same spelling in the table and in `--json`.
 */
import { ACTED_ON, actedOnEscaped, escapeOne, jsonActedOnEscaped } from '../common/acted-on.js';

/**
 * `text` for a table cell or a message: what a terminal would act on is escaped, and so is a
 * backslash, so that an escape shown can only have come from this function.
 */
export function visibleText(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(ACTED_ON, escapeOne);
}

/**
 * `value` inside a line rootsctl writes: what a terminal acts on is escaped, a line's end and a
 * tab too, as in a table's cells (io.ts `columns`). A name from the filesystem or the daemon can
 * then neither add a line that reads as rootsctl's own (`allowed: read: /etc/shadow`) nor move
 * the cursor. `terminalSafe` keeps line ends, as the command's own text has them: every value a
 * command puts into a line goes through this first.
 */
export function inLine(value: string | number): string {
  return actedOnEscaped(String(value));
}

/**
 * `value` as JSON that is safe on a terminal (common/acted-on.ts): what JSON.stringify writes raw
 * and a terminal acts on becomes `\uXXXX`, which any JSON reader takes as the same string.
 * `indent` as JSON.stringify's (its line breaks stay).
 */
export function terminalJson(value: unknown, indent?: number): string {
  return jsonActedOnEscaped(JSON.stringify(value, null, indent));
}

/** At most `max` characters of `text` for a message, saying how much was left out. */
export function clipped(text: string, max = 200): string {
  return text.length <= max
    ? text
    : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/**
 * The colour sequences `paint` writes (style.ts), the only ones rootsctl means: SGR attributes,
 * which change how text looks and do nothing else.
 */
// eslint-disable-next-line no-control-regex
const OWN_COLOUR = /\u001b\[(?:0|2|31|32|33)m/;

/** One pass over a text for `terminalSafe`: rootsctl's own colours, or one character acted on. */
const STREAM = new RegExp(`${OWN_COLOUR.source}|${ACTED_ON.source}`, 'g');

/** A match of `STREAM` or `ACTED_ON` as printed: a colour, a tab and a line's end stay. */
const kept = (m: string): string => (m.length > 1 || m === '\n' || m === '\t' ? m : escapeOne(m));

/**
 * `io` with everything it prints made safe for a terminal, whatever the command: the last line
 * of defence for a name no command escaped (a tab and a line's end stay). Idempotent on what was
 * already escaped, and JSON stays JSON: the characters escaped can appear in JSON text only
 * inside strings, as `\uXXXX` means the same. `keepColours`: the colours rootsctl paints itself
 * stay, for the one command that paints (`doctor`), which escapes every name it shows before
 * painting; everywhere else a name's `ESC [ 3 1 m` would pass for rootsctl's own, so none does.
 */
export function terminalSafe<T extends { out(text: string): void; err(text: string): void }>(
  io: T,
  keepColours = false,
): T {
  const stream = keepColours ? STREAM : ACTED_ON;
  const safe = (text: string): string => text.replace(stream, kept);
  return {
    ...io,
    out: (text: string) => io.out(safe(text)),
    err: (text: string) => io.err(safe(text)),
  };
}
