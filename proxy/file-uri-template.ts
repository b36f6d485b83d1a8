/**
 * The paths a `file:` URI template (RFC 6570) names once its variables are filled in, for a
 * `completion/complete` of one of them (completion-paths.ts). A server completing a variable of
 * `file:///{+path}` lists what the filled-in path could become; which expansion it applies to a
 * value it is given raw is its own affair, so every value goes in as written (a `/` in it is a
 * separator, as `{+x}` keeps it), and only what would end the path (`?`, `#`) or be refused as a
 * raw space is escaped before the URI is read by `fileUriPath`, which refuses what parsers read
 * differently (dot segments, a host, `%2f`, a backslash). A value holding `%` is refused: one
 * server decodes it, another does not.
 */
import { showPath } from './enforce.js';
import { fileUriPath } from './file-uri.js';

/** One `{…}` expression: where it is in the template, its operator and its variables. */
interface Expression {
  start: number;
  end: number;
  op: string;
  vars: { name: string; prefix: number | undefined }[];
}

/** RFC 6570's operators; `=,!@|` are reserved for future ones and are no template's today. */
const OPERATORS = '+#./;?&';
const VARSPEC =
  /^((?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*)(?::([1-9][0-9]{0,3})|\*)?$/;

/** The template's expressions, or why it is no template the proxy can fill in. */
function parse(template: string): Expression[] | string {
  const out: Expression[] = [];
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (c === '}') return 'has a } that closes no expression';
    if (c !== '{') continue;
    const end = template.indexOf('}', i);
    const body = end === -1 ? '' : template.slice(i + 1, end);
    if (end === -1 || body.includes('{')) return 'has a { that is not closed';
    const op = OPERATORS.includes(body[0] ?? '') ? body[0]! : '';
    const vars = [];
    for (const spec of body.slice(op.length).split(',')) {
      const m = VARSPEC.exec(spec);
      if (m === null) return `has an expression {${body}} that is not one of RFC 6570`;
      vars.push({ name: m[1]!, prefix: m[2] === undefined ? undefined : Number(m[2]) });
    }
    out.push({ start: i, end: end + 1, op, vars });
    i = end;
  }
  return out;
}

/** A value as it goes into the URI: what would end the path or be a raw space, escaped. */
function escapeValue(value: string): string {
  return value.replace(/[?# ]/g, (c) => encodeURIComponent(c));
}

/**
 * One expression filled in. Query and fragment expressions (`?`, `&`, `#`) add nothing to the path;
 * a variable without a value is left out, as RFC 6570 says.
 */
function expand(e: Expression, values: Readonly<Record<string, string>>): string {
  if (e.op === '?' || e.op === '&' || e.op === '#') return '';
  const parts: string[] = [];
  for (const v of e.vars) {
    if (!Object.hasOwn(values, v.name)) continue;
    // Whole, prefix modifier (`{x:3}`) or not: a server completing `x` is given the whole value.
    const value = escapeValue(values[v.name]!);
    if (e.op === '/') parts.push(`/${value}`);
    else if (e.op === '.') parts.push(`.${value}`);
    else if (e.op === ';') parts.push(value === '' ? `;${v.name}` : `;${v.name}=${value}`);
    else parts.push(value);
  }
  return e.op === '' || e.op === '+' ? parts.join(',') : parts.join('');
}

/** The names of the template's variables, or why it is no template the proxy can fill in. */
export function templateVariables(template: string): Set<string> | { problem: string } {
  const parsed = parse(template);
  if (typeof parsed === 'string') return { problem: parsed };
  return new Set(parsed.flatMap((e) => e.vars.map((v) => v.name)));
}

/**
 * The paths `template` names filled in with `values`: the whole of it, and (when `completed` is
 * one of its variables) the part up to the expression that holds it, which is what completing it
 * lists. Or why it names none the proxy can check.
 */
export function templatePaths(
  template: string,
  values: Readonly<Record<string, string>>,
  completed: string,
): { paths: string[] } | { problem: string } {
  const parsed = parse(template);
  if (typeof parsed === 'string') return { problem: parsed };
  for (const e of parsed) {
    for (const v of e.vars) {
      if (Object.hasOwn(values, v.name) && values[v.name]!.includes('%')) {
        return {
          problem: `is filled with a value of ${v.name} that holds %, which one server decodes and another takes as it is; give the name as it is on disk`,
        };
      }
    }
  }
  const fill = (upTo: number): string => {
    let out = '';
    let at = 0;
    for (const e of parsed.slice(0, upTo)) {
      out += template.slice(at, e.start) + expand(e, values);
      at = e.end;
    }
    return upTo === parsed.length ? out + template.slice(at) : out;
  };
  const texts = [fill(parsed.length)];
  const holds = parsed.findIndex((e) => e.vars.some((v) => v.name === completed));
  if (holds !== -1) texts.push(fill(holds + 1));
  const paths: string[] = [];
  for (const text of new Set(texts)) {
    const r = fileUriPath(text);
    if ('problem' in r)
      return { problem: `filled in, it reads ${showPath(text)}, which ${r.problem}` };
    paths.push(r.path);
  }
  return { paths };
}
