/**
 * Find every path in one tool call's arguments: strings at places the schema or the name makes a
 * path (`path`, `files[2].path`, `options.target`), and strings that are paths by their value
 * wherever they are. Walks nested objects and arrays together with the schema, within bounds, and
 * fails closed: a path-like place it cannot read is a path, and one holding a value that is not a
 * string (nor an object or array to walk) refuses the call.
 */
import { looseKey } from './ambiguous-keys.js';
import { isPathName, isUrlName, looksLikePath } from './path-names.js';
import {
  allows,
  isListedValue,
  isUriPlace,
  itemView,
  jsonType,
  memberView,
  rootView,
  says,
  type SchemaView,
} from './schema-view.js';

/** A URL with an authority (`https://host/…`, `s3://bucket/…`), as a name about URLs takes it. */
const URL_VALUE = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//;

/** One string to check, where it was, and whether its place takes URIs. */
export interface PathValue {
  value: string;
  uri: boolean;
  /** Where in the arguments: `path`, `files[2].path`. */
  where: string;
}

/** A call refused before any path is checked, naming the place in the arguments. */
export interface ArgumentRefusal {
  path: string;
  reason: string;
}

/** How deep the walk goes into nested objects and arrays. */
export const MAX_ARGUMENT_DEPTH = 64;
/** How many values (of any type) one call's arguments may hold. */
export const MAX_ARGUMENT_VALUES = 100_000;

/** What the policy says of a tool's paths: exactly these top-level arguments, nothing by value. */
export type DeclaredPaths = readonly string[] | undefined;

class Refused extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

function memberWhere(where: string, key: string): string {
  const plain = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
  if (where === '') return plain;
  return plain === key ? `${where}.${key}` : `${where}[${plain}]`;
}

/** Walks one call's arguments; see `pathValues`. */
class Walker {
  readonly found: PathValue[] = [];
  private count = 0;

  /** The policy's path arguments as a server matches keys: `LOCATION` is `location` to Go. */
  private readonly declaredKeys: Set<string> | undefined;

  constructor(private readonly declared: DeclaredPaths) {
    this.declaredKeys = declared === undefined ? undefined : new Set(declared.map(looseKey));
  }

  /**
   * `name` is the nearest member name (an array's elements keep their array's); `byName` says
   * whether that name (or the policy) makes the place a path.
   */
  walk(
    value: unknown,
    view: SchemaView,
    where: string,
    name: string,
    byName: boolean,
    depth: number,
  ): void {
    if (++this.count > MAX_ARGUMENT_VALUES) {
      throw new Refused(
        'arguments',
        `they hold more than ${MAX_ARGUMENT_VALUES} values; mcp-roots-proxy checks no more in one call`,
      );
    }
    if (depth > MAX_ARGUMENT_DEPTH) {
      throw new Refused(
        `argument ${where}`,
        `it nests deeper than ${MAX_ARGUMENT_DEPTH} levels; mcp-roots-proxy checks no deeper`,
      );
    }
    if (typeof value === 'string') return this.onString(value, view, where, name, byName);
    const type = jsonType(value);
    // At a path-like place, a value that is not a string must be one the schema says it takes:
    // a server may read anything else as a path. Objects and arrays are walked where allowed.
    const fits = type === 'object' || type === 'array' ? allows(view, type) : says(view, type);
    if (byName && !fits) {
      throw new Refused(
        `argument ${where}`,
        `it holds ${type === 'object' || type === 'array' ? 'an' : 'a'} ${type} where a path is expected (the name ${JSON.stringify(name)} makes it a path); give a string`,
      );
    }
    if (Array.isArray(value)) {
      value.forEach((v, i) =>
        this.walk(v, itemView(view, i), `${where}[${i}]`, name, byName, depth + 1),
      );
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, v] of Object.entries(value)) {
        const child = memberView(view, key);
        this.walk(v, child, memberWhere(where, key), key, isPathName(key), depth + 1);
      }
    }
  }

  /** Top level: the policy's list, if any, replaces the derived rules. */
  walkTop(args: Record<string, unknown>, view: SchemaView): void {
    for (const [key, v] of Object.entries(args)) {
      if (this.declaredKeys !== undefined && !this.declaredKeys.has(looseKey(key))) continue;
      const child = memberView(view, key);
      const byName = this.declared !== undefined || isPathName(key);
      this.walk(v, child, memberWhere('', key), key, byName, 1);
    }
  }

  private onString(
    value: string,
    view: SchemaView,
    where: string,
    name: string,
    byName: boolean,
  ): void {
    // A name about URLs (`source_url`, `pathOrUrl`) takes a URL as it is; anything else there,
    // `foo:bar/../x` included, is a path to a server that tries a path when it is no URL.
    if (byName && isUrlName(name) && URL_VALUE.test(value) && !/^file:/i.test(value)) return;
    const uri = isUriPlace(view);
    if (byName && !isListedValue(view, value)) {
      this.found.push({ value, uri, where });
    } else if (uri) {
      this.found.push({ value, uri: true, where });
    } else if (this.declared === undefined && looksLikePath(value)) {
      // Any name: a server may read it as a path. A `file:` value is checked as the URI it is.
      this.found.push({ value, uri: true, where });
    }
  }
}

/**
 * The path values in a call's `args` under the tool's `inputSchema` (undefined: not known), or
 * why the call is refused before any is checked. `declared` is the policy's list of the tool's
 * path arguments, which replaces the rules by name and by value.
 */
export function pathValues(
  args: Record<string, unknown>,
  inputSchema: unknown,
  declared: DeclaredPaths = undefined,
): PathValue[] | ArgumentRefusal {
  const walker = new Walker(declared);
  try {
    walker.walkTop(args, rootView(inputSchema));
  } catch (err) {
    if (err instanceof Refused) return { path: err.path, reason: err.reason };
    throw err;
  }
  return walker.found;
}
