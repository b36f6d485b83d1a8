/**
 * Finding where a value of the parsed data was written: the YAML node for a path of keys and
 * indexes, its line and column, and the path as a reader writes it (`servers.fs.roots[2]`).
 */
import { isAlias, isMap, isScalar, isSeq, type Document, type Pair, type YAMLMap } from 'yaml';
import type { Pos } from './model.js';

/** A step into YAML data: a mapping key or a sequence index. */
export type Segment = string | number;

/** A YAML node as this module uses it: anything with an optional source range. */
export interface AnyNode {
  range?: [number, number, number] | null;
}

/** A mapping key as `toJS` names it (an empty key is ""). */
export function keyString(key: unknown): string {
  const value: unknown = isScalar(key) ? key.value : key;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // null names the empty key; collection keys are reported apart (badKeys).
  return value === null || value === undefined ? '' : typeof value;
}

/** Finds the YAML node for a data path, and turns offsets into positions. */
export class Locator {
  private readonly keys = new WeakMap<YAMLMap, Map<string, Pair>>();

  constructor(
    private readonly doc: Document,
    readonly at: (offset: number) => Pos,
    private readonly file: string,
  ) {}

  /** The pair for `key` in `map`; indexed once per map, so that big files stay linear. */
  private pair(map: YAMLMap, key: string): Pair | undefined {
    let index = this.keys.get(map);
    if (index === undefined) {
      index = new Map();
      for (const p of map.items) {
        const k = keyString(p.key);
        if (!index.has(k)) index.set(k, p);
      }
      this.keys.set(map, index);
    }
    return index.get(key);
  }

  /** The node at `segs` (following aliases) and the key node that leads to it. */
  find(segs: readonly Segment[]): { node: unknown; key: AnyNode | undefined; found: boolean } {
    let node: unknown = this.doc.contents;
    let key: AnyNode | undefined;
    for (const seg of segs) {
      if (isAlias(node)) node = node.resolve(this.doc);
      if (isMap(node)) {
        const pair = this.pair(node, String(seg));
        if (!pair) return { node, key, found: false };
        key = (pair.key as AnyNode | null) ?? undefined;
        node = pair.value ?? undefined;
      } else if (isSeq(node)) {
        const item: unknown = node.items[Number(seg)];
        if (item === undefined) return { node, key, found: false };
        key = undefined;
        node = item;
      } else {
        return { node, key, found: false };
      }
    }
    return { node, key, found: true };
  }

  /** The position of the value at `segs`; for an empty value, of its key. */
  value(segs: readonly Segment[]): Pos {
    const { node, key } = this.find(segs);
    const range = (node as AnyNode | undefined)?.range;
    const empty = isScalar(node) && node.value === null && range?.[0] === range?.[1];
    if (empty && key?.range) return this.at(key.range[0]);
    if (range) return this.at(range[0]);
    if (key?.range) return this.at(key.range[0]);
    return this.start();
  }

  /** The position of the key that leads to `segs` (the value's if it has no key). */
  key(segs: readonly Segment[]): Pos {
    const { key, found } = this.find(segs);
    if (found && key?.range) return this.at(key.range[0]);
    return this.value(segs);
  }

  start(): Pos {
    return { file: this.file, line: 1, column: 1 };
  }
}

/** `servers.filesystem.roots[2].readonly`; odd names in brackets: `servers["*"]`. */
export function dotted(segs: readonly Segment[]): string {
  let out = '';
  for (const seg of segs) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (seg.length > 48) out += `[${JSON.stringify(`${seg.slice(0, 40)}…`)}]`;
    else if (/^[\p{L}\p{N}_-]+$/u.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}
