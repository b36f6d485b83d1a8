/** Building the engine's model of one policy file from data the schema has accepted. */
import { isMap } from 'yaml';
import { parseRfc3339 } from '../common/rfc3339.js';
import type { AskRule, LaunchRule, ToolRule } from '../common/types.js';
import type { DenyEntry, ParsedPolicyFile, RootEntry, ServerBlock } from './model.js';
import { keyString, type Locator, type Segment } from './yaml-locate.js';

type Access = DenyEntry['access'];
type Kind = NonNullable<RootEntry['kind']>;
type RawDeny = string | { path: string; access?: Access };
interface RawRoot {
  path: string;
  name?: string;
  readOnly?: boolean;
  expires?: string;
  kind?: Kind;
}
type RawAsk = boolean | { write: boolean };
interface RawServer {
  readOnly?: boolean;
  ask?: RawAsk;
  roots?: RawRoot[];
  deny?: RawDeny[];
  tools?: Record<string, ToolRule>;
  launch?: LaunchRule;
  sandbox?:
    boolean | { read?: string[]; write?: string[]; network?: boolean; unixSockets?: boolean };
}
export interface RawPolicy {
  version: 1;
  include?: string[];
  defaults?: { readOnly?: boolean };
  ask?: RawAsk;
  deny?: RawDeny[];
  servers?: Record<string, RawServer>;
}

export function buildPolicyFile(
  data: RawPolicy,
  locate: Locator,
  file: string,
  sha256: string,
): ParsedPolicyFile {
  const deny = (list: RawDeny[] | undefined, base: Segment[]): DenyEntry[] =>
    present(list, (d, i) =>
      typeof d === 'string'
        ? { path: d, access: 'all', pos: locate.value([...base, i]) }
        : { path: d.path, access: d.access ?? 'all', pos: locate.value([...base, i]) },
    );

  const servers: ServerBlock[] = [];
  for (const pattern of serverOrder(data, locate)) {
    const raw = data.servers?.[pattern];
    if (raw === undefined) continue;
    const base: Segment[] = ['servers', pattern];
    const block: ServerBlock = {
      pattern,
      pos: locate.key(base),
      roots: present(raw.roots, (r, i) => rootEntry(r, [...base, 'roots', i], locate)),
      deny: deny(raw.deny, [...base, 'deny']),
      tools: Object.fromEntries(
        Object.entries(raw.tools ?? {}).map(([name, rule]) => [name, toolRule(rule)]),
      ),
    };
    if (raw.readOnly !== undefined) block.readOnly = raw.readOnly;
    if (raw.launch !== undefined) block.launch = structuredClone(raw.launch);
    if (raw.sandbox !== undefined && raw.sandbox !== false) {
      const sb = raw.sandbox === true ? {} : raw.sandbox;
      block.sandbox = { read: [...(sb.read ?? [])], write: [...(sb.write ?? [])] };
      if (sb.network !== undefined) block.sandbox.network = sb.network;
      if (sb.unixSockets !== undefined) block.sandbox.unixSockets = sb.unixSockets;
    }
    const ask = raw.ask ?? data.ask;
    if (ask !== undefined) block.ask = askRule(ask);
    servers.push(block);
  }

  return {
    file,
    sha256,
    include: present(data.include, (pattern, i) => ({
      pattern,
      pos: locate.value(['include', i]),
    })),
    defaults: { readOnly: data.defaults?.readOnly ?? false },
    deny: deny(data.deny, ['deny']),
    servers,
  };
}

/**
 * `fn` of each item of a list, by its index in the file. A list of a file the schema refused may
 * have holes where refused items were taken out (policies/schema-salvage.ts); they are skipped,
 * and the items after them keep their index, so their positions.
 */
function present<T, R>(
  list: readonly (T | undefined)[] | undefined,
  fn: (item: T, i: number) => R,
): R[] {
  const out: R[] = [];
  (list ?? []).forEach((item, i) => {
    if (item !== undefined) out.push(fn(item, i));
  });
  return out;
}

/** Server names in the order written (a JS object would put integer-like names first). */
function serverOrder(data: RawPolicy, locate: Locator): string[] {
  const names = Object.keys(data.servers ?? {});
  const { node } = locate.find(['servers']);
  if (!isMap(node)) return names;
  const known = new Set(names);
  const written = node.items.map((p) => keyString(p.key)).filter((k) => known.has(k));
  return [...new Set([...written, ...names])];
}

function rootEntry(r: RawRoot, segs: Segment[], locate: Locator): RootEntry {
  const entry: RootEntry = {
    path: r.path,
    pos: locate.value(segs),
    pathPos: locate.value([...segs, 'path']),
  };
  if (r.name !== undefined) entry.name = r.name;
  if (r.readOnly !== undefined) entry.readOnly = r.readOnly;
  if (r.expires !== undefined) entry.expires = parseRfc3339(r.expires);
  if (r.kind !== undefined) entry.kind = r.kind;
  return entry;
}

/** `ask: true`, `false` or `{write: true}` as the rule the proxy reads. */
function askRule(ask: RawAsk): AskRule {
  return typeof ask === 'boolean'
    ? { outside: ask, write: false }
    : { outside: true, write: ask.write };
}

function toolRule(rule: ToolRule): ToolRule {
  const out: ToolRule = {};
  if (rule.paths !== undefined) out.paths = [...rule.paths];
  if (rule.readOnly !== undefined) out.readOnly = rule.readOnly;
  return out;
}
