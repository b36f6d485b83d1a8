/**
 * One argument as a person pastes it into a POSIX shell: bare when plainly safe, single-quoted
 * otherwise, and in bash's `$'…'` form when it holds control characters, so that a newline or an
 * escape sequence in a path never reaches a terminal raw (or splits a message into lines).
 */
export function shellQuote(arg: string): string {
  if (/^[\w@%+=:,./-]+$/.test(arg)) return arg;
  // eslint-disable-next-line no-control-regex
  if (!/[\u0000-\u001f\u007f]/.test(arg)) return `'${arg.split("'").join(`'\\''`)}'`;
  let out = "$'";
  for (const ch of arg) {
    const code = ch.codePointAt(0)!;
    if (ch === "'" || ch === '\\') out += `\\${ch}`;
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}'`;
}
