/**
 * Variable references as Go's `os.Expand` reads them (`os.ExpandEnv` on a server's argument),
 * the widest of the expanders servers use: `$NAME`, `${anything}`, a special one-character
 * variable (`$1`, `$@`, `$$`), `${}` and an unclosed `${`, which it drops. A scanner, not a
 * pattern: a pattern of optional parts repeated took seconds on 80 characters of `${$`.
 */

/** One reference at `i` (where `text[i]` is `$`): where it ends and its name; undefined if none. */
function reference(text: string, i: number): { end: number; name: string } | undefined {
  const c = text[i + 1];
  if (c === undefined) return undefined;
  if (c === '{') {
    const close = text.indexOf('}', i + 2);
    // Go's "bad syntax": `${` with no `}` is dropped, and so is `${}`.
    if (close < 0) return { end: i + 2, name: '' };
    return { end: close + 1, name: text.slice(i + 2, close) };
  }
  if (/[A-Za-z_]/.test(c)) {
    let j = i + 2;
    while (j < text.length && /[A-Za-z0-9_]/.test(text[j]!)) j++;
    return { end: j, name: text.slice(i + 1, j) };
  }
  if (/[0-9*#$@!?-]/.test(c)) return { end: i + 2, name: c };
  return undefined;
}

/**
 * The references at the start of `text`, one after the other: where they end (0 for none), and
 * whether one is named (`$HOME`, `${X}`) rather than special (`$5`).
 */
export function leadingVariables(text: string): { end: number; named: boolean } {
  let end = 0;
  let named = false;
  while (text[end] === '$') {
    const ref = reference(text, end);
    if (ref === undefined) break;
    if (!/^[0-9*#$@!?-]$/.test(ref.name)) named = true;
    end = ref.end;
  }
  return { end, named };
}

/** `text` with every reference expanded as `os.ExpandEnv` expands it in `env` (unset: nothing). */
export function expandedAsGo(text: string, env: NodeJS.ProcessEnv): string {
  let out = '';
  let from = 0;
  for (let i = text.indexOf('$'); i >= 0; i = text.indexOf('$', i + 1)) {
    if (i < from) continue;
    const ref = reference(text, i);
    if (ref === undefined) continue;
    out += text.slice(from, i) + (env[ref.name] ?? '');
    from = ref.end;
    i = ref.end - 1;
  }
  return out + text.slice(from);
}
