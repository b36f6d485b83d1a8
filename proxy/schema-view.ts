/**
 * What a tool's JSON Schema says about one place in its arguments, seen through `$ref`, `anyOf`,
 * `oneOf` and `allOf` (what zod unions, Python's `str | None` and pydantic models produce). Where
 * the schema cannot be read (no schema, `true`, `{}`, a `$ref` that is not local, a cycle, too
 * much branching) the view is open: anything may be there, and the caller fails closed.
 */
import { isObject } from '../common/is-object.js';

type Schema = Record<string, unknown>;

/** The JSON types a value can have; `integer` is folded into `number`. */
export type JsonType = 'string' | 'number' | 'boolean' | 'null' | 'array' | 'object';

/** The schemas that may apply at one place in the arguments. */
export interface SchemaView {
  /** The tool's whole input schema, which local `$ref`s point into. */
  root: unknown;
  /** Schemas with their `$ref`s followed and combinators flattened. */
  leaves: Schema[];
  /** Some branch could not be read: any value may be there. */
  open: boolean;
}

/** How many `$ref`s one place may follow in a chain before the view is open. */
const MAX_REF_CHAIN = 32;
/** How many subschemas one place may expand to before the view is open. */
const MAX_EXPANSION = 256;

const URI_FORMATS = new Set(['uri', 'uri-reference', 'iri', 'iri-reference']);

/** Keywords that say nothing about the value: a schema with only these and a combinator is no leaf. */
const ANNOTATIONS = new Set([
  '$ref',
  'anyOf',
  'oneOf',
  'allOf',
  '$defs',
  'definitions',
  '$schema',
  '$id',
  '$comment',
  'title',
  'description',
  'default',
  'examples',
]);

/** The type of a JSON value, as schemas name it. */
export function jsonType(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const t = typeof value;
  if (t === 'string' || t === 'number' || t === 'boolean') return t;
  return 'object';
}

/** A local JSON pointer (`#`, `#/$defs/A`, with `~0`, `~1` and %-escapes), or undefined. */
function resolveRef(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(node) && /^(0|[1-9][0-9]*)$/.test(key)) node = node[Number(key)];
    else if (isObject(node) && Object.hasOwn(node, key)) node = node[key];
    else return undefined;
  }
  return node;
}

/** The view of `schemas` (each a schema or undefined for "not said") within `root`. */
export function viewOf(root: unknown, schemas: unknown[]): SchemaView {
  const view: SchemaView = { root, leaves: [], open: false };
  let budget = MAX_EXPANSION;
  const expand = (s: unknown, chain: readonly string[]): void => {
    if (--budget < 0 || chain.length > MAX_REF_CHAIN) {
      view.open = true;
      return;
    }
    if (s === false) return; // allows nothing: adds nothing
    if (!isObject(s)) {
      view.open = true; // undefined ("not said"), true, or not a schema
      return;
    }
    let combines = false;
    if (typeof s.$ref === 'string') {
      combines = true;
      const target = chain.includes(s.$ref) ? undefined : resolveRef(root, s.$ref);
      if (target === undefined) view.open = true;
      else expand(target, [...chain, s.$ref]);
    }
    for (const k of ['anyOf', 'oneOf', 'allOf']) {
      const branches = s[k];
      if (!Array.isArray(branches)) continue;
      combines = true;
      for (const b of branches) expand(b, chain);
    }
    if (!combines || Object.keys(s).some((k) => !ANNOTATIONS.has(k))) view.leaves.push(s);
  };
  for (const s of schemas) expand(s, []);
  return view;
}

/** The view of a tool's whole arguments. */
export function rootView(inputSchema: unknown): SchemaView {
  return viewOf(inputSchema, [inputSchema]);
}

/** The JSON types one leaf allows, or undefined for any. */
function leafTypes(leaf: Schema): Set<JsonType> | undefined {
  let named: unknown[] | undefined;
  if (typeof leaf.type === 'string') named = [leaf.type];
  else if (Array.isArray(leaf.type)) named = leaf.type;
  else if (Array.isArray(leaf.enum)) named = leaf.enum.map(jsonType);
  else if ('const' in leaf) named = [jsonType(leaf.const)];
  if (named === undefined) return undefined;
  const out = new Set<JsonType>();
  for (const t of named) {
    if (t === 'integer') out.add('number');
    else if (typeof t === 'string') out.add(t as JsonType);
  }
  return out;
}

/** The leaves that allow a value of type `t`. */
function leavesFor(view: SchemaView, t: JsonType): Schema[] {
  return view.leaves.filter((l) => leafTypes(l)?.has(t) ?? true);
}

/** Whether a value of type `t` may be here; an open view allows everything. */
export function allows(view: SchemaView, t: JsonType): boolean {
  return view.open || leavesFor(view, t).length > 0;
}

/** Whether some branch names type `t` (a branch with no `type` allows it without saying so). */
export function says(view: SchemaView, t: JsonType): boolean {
  return view.leaves.some((l) => leafTypes(l)?.has(t) === true);
}

/** Whether every string this place allows is a URI (`format: uri` and kin). */
export function isUriPlace(view: SchemaView): boolean {
  const strings = leavesFor(view, 'string');
  return (
    !view.open &&
    strings.length > 0 &&
    strings.every((l) => typeof l.format === 'string' && URI_FORMATS.has(l.format))
  );
}

/** Whether the schema limits this place's strings to listed values and `value` is one of them. */
export function isListedValue(view: SchemaView, value: string): boolean {
  const strings = leavesFor(view, 'string');
  if (view.open || strings.length === 0) return false;
  const listed = (l: Schema): unknown[] | undefined =>
    Array.isArray(l.enum) ? l.enum : 'const' in l ? [l.const] : undefined;
  if (!strings.every((l) => listed(l) !== undefined)) return false;
  return strings.some((l) => listed(l)?.includes(value));
}

/** The view of member `key` of an object here. */
export function memberView(view: SchemaView, key: string): SchemaView {
  const found: unknown[] = [];
  let unsaid = view.open;
  for (const leaf of leavesFor(view, 'object')) {
    const props = isObject(leaf.properties) ? leaf.properties : undefined;
    if (props !== undefined && Object.hasOwn(props, key)) found.push(props[key]);
    else if (isObject(leaf.additionalProperties)) found.push(leaf.additionalProperties);
    // Not listed, `patternProperties` (a server's regex is not run here), or anything allowed.
    else unsaid = true;
  }
  if (found.length === 0) unsaid = true;
  const child = viewOf(view.root, found);
  if (unsaid) child.open = true;
  return child;
}

/** The view of element `index` of an array here. */
export function itemView(view: SchemaView, index: number): SchemaView {
  const found: unknown[] = [];
  let unsaid = view.open;
  for (const leaf of leavesFor(view, 'array')) {
    const prefix = Array.isArray(leaf.prefixItems) ? leaf.prefixItems : undefined;
    const tuple = Array.isArray(leaf.items) ? leaf.items : undefined;
    let s: unknown;
    if (prefix !== undefined && index < prefix.length) s = prefix[index];
    else if (tuple !== undefined) s = index < tuple.length ? tuple[index] : leaf.additionalItems;
    else s = leaf.items;
    if (s === undefined) unsaid = true;
    else found.push(s);
  }
  if (found.length === 0) unsaid = true;
  const child = viewOf(view.root, found);
  if (unsaid) child.open = true;
  return child;
}
