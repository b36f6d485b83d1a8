/**
 * The paths a `completion/complete` request names (MCP 2025-06-18 and 2026-07-28: `ref`, a prompt
 * or a resource template; `argument: {name, value}`, the one completed; `context.arguments`, those
 * already given). A server completing a path lists what it could become: the entries of the
 * directory it lies in. So:
 *
 * - the argument and the context's arguments are checked as a prompt's are (by name and by value);
 * - a `file:` resource template is filled in with them and the paths it then names are checked
 *   (its variables are placed by the template, so they are not also paths by their names);
 * - for each path that ends in a name, the directory holding it is checked too: completing a root's
 *   own name lists the root's parent.
 *
 * Everything is checked for reading. A shape a server may read otherwise (an argument without a
 * string name, context arguments that are not an object) is refused.
 */
import type { JsonObject } from '../protocol/messages.js';
import { pathValues, type ArgumentRefusal, type PathValue } from './arguments.js';
import { showPath, toLocalPath } from './enforce.js';
import { isFileUri } from './file-uri.js';
import { templatePaths, templateVariables } from './file-uri-template.js';
import { isObject } from './mcp-line.js';
import { looksLikePath } from './path-names.js';

/** What a completion completes, for messages and the decision log, and the paths to check. */
export interface CompletionPaths {
  /** `the argument path of the prompt explain_file`, `… of the resource template file:///{+path}`. */
  what: string;
  values: PathValue[] | ArgumentRefusal;
}

/** Whether `value` is absent or null (which a server reads as absent). */
const absent = (value: unknown): boolean => value === undefined || value === null;

function describe(ref: unknown, argument: string | undefined): string {
  const arg = argument === undefined ? 'an argument' : `the argument ${JSON.stringify(argument)}`;
  if (!isObject(ref)) return arg;
  if (typeof ref.uri === 'string') return `${arg} of the resource template ${showPath(ref.uri)}`;
  if (typeof ref.name === 'string') return `${arg} of the prompt ${JSON.stringify(ref.name)}`;
  return arg;
}

/**
 * The path values of `args`: those named by `templated` by their value only, the others as a
 * prompt's arguments (by name and by value).
 */
function valuesOf(
  args: JsonObject,
  templated: ReadonlySet<string>,
  where: string,
): PathValue[] | ArgumentRefusal {
  // No prototype: a name `__proto__` is then a key as any other, as it is to the server.
  const free = Object.create(null) as JsonObject;
  const out: PathValue[] = [];
  for (const [name, value] of Object.entries(args)) {
    if (!templated.has(name)) {
      free[name] = value;
    } else if (typeof value !== 'string') {
      return {
        path: `${where}.${name}`,
        reason: `it fills a variable of a file: resource template and is not a string`,
      };
    } else if (looksLikePath(value)) {
      out.push({ value, uri: true, where: name });
    }
  }
  const found = pathValues(free, undefined);
  return Array.isArray(found) ? [...out, ...found] : found;
}

/** `values`, each local path that ends in a name followed by the directory that holds it. */
function withDirectories(values: PathValue[]): PathValue[] {
  const out: PathValue[] = [];
  for (const v of values) {
    out.push(v);
    const local = toLocalPath(v.value, v.uri);
    if (local === undefined || 'reason' in local) continue;
    const p = local.path;
    if (!p.startsWith('/') || p.endsWith('/')) continue;
    const dir = p.slice(0, p.lastIndexOf('/')) || '/';
    out.push({ value: dir, uri: false, where: `${v.where}, the directory it lies in` });
  }
  return out;
}

/** The paths `params` of a `completion/complete` names, or why it is refused unread. */
export function completionPaths(params: JsonObject): CompletionPaths {
  const { ref, argument, context } = params;
  const name = isObject(argument) && typeof argument.name === 'string' ? argument.name : undefined;
  const what = describe(ref, name);
  const refuse = (path: string, reason: string): CompletionPaths => ({
    what,
    values: { path, reason },
  });
  if (!isObject(argument) || name === undefined) {
    return refuse('argument', 'it is not an object with a string name');
  }
  if (!absent(context) && !isObject(context)) return refuse('context', 'it is not an object');
  const given = isObject(context) ? context.arguments : undefined;
  if (!absent(given) && !isObject(given)) {
    return refuse('context.arguments', 'they are not an object of names and values');
  }
  const contextArgs = isObject(given) ? given : {};

  const template = isObject(ref) && typeof ref.uri === 'string' ? ref.uri : undefined;
  let templated: ReadonlySet<string> = new Set();
  const values: PathValue[] = [];
  if (template !== undefined && isFileUri(template)) {
    const vars = templateVariables(template);
    if (!(vars instanceof Set)) {
      return refuse(template, `the resource template ${showPath(template)} ${vars.problem}`);
    }
    templated = vars;
    const filled = Object.create(null) as Record<string, string>;
    for (const [k, v] of Object.entries(contextArgs)) if (typeof v === 'string') filled[k] = v;
    if (typeof argument.value === 'string') filled[name] = argument.value;
    const r = templatePaths(template, filled, name);
    if ('problem' in r) {
      return refuse(template, `the resource template ${showPath(template)}, ${r.problem}`);
    }
    for (const p of r.paths) values.push({ value: p, uri: false, where: 'ref.uri, filled in' });
  } else if (template !== undefined && looksLikePath(template)) {
    // Not a file: URI, yet a path by its value: a server may read it as one.
    values.push({ value: template, uri: true, where: 'ref.uri' });
  }
  for (const [args, where] of [
    [{ [name]: argument.value }, 'argument'],
    [contextArgs, 'context.arguments'],
  ] as const) {
    const found = valuesOf(args, templated, where);
    if (!Array.isArray(found)) return { what, values: found };
    values.push(...found);
  }
  return { what, values: withDirectories(values) };
}
