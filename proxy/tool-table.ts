/** What the proxy knows about each tool: which arguments are paths, and whether it only reads. */
import type { ToolRule } from '../common/types.js';

/** Argument names taken as paths when they are strings or arrays of strings (ARCHITECTURE.md). */
export const PATH_ARGUMENT_NAMES: ReadonlySet<string> = new Set([
  'path',
  'paths',
  'file',
  'files',
  'source',
  'destination',
  'directory',
  'dir',
]);

/** One path argument of a tool; `uri` when the schema says `format: uri`. */
export interface PathArgument {
  name: string;
  uri: boolean;
}

/** A tool as enforcement sees it. */
export interface ToolInfo {
  paths: PathArgument[];
  readOnly: boolean;
}

type Schema = Record<string, unknown>;

function isObject(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function types(schema: Schema): unknown[] {
  const t = schema.type;
  return Array.isArray(t) ? t : [t];
}

function classify(name: string, schema: unknown): PathArgument | undefined {
  if (!isObject(schema)) return undefined;
  const t = types(schema);
  const items = isObject(schema.items) ? schema.items : undefined;
  const stringy = t.includes('string');
  const stringArray = t.includes('array') && items !== undefined && types(items).includes('string');
  if (!stringy && !stringArray) return undefined;
  const uri = schema.format === 'uri' || (stringArray && items?.format === 'uri');
  if (uri || PATH_ARGUMENT_NAMES.has(name)) return { name, uri };
  return undefined;
}

/** Learn a tool from its `tools/list` entry. */
export function learnTool(tool: Schema): ToolInfo {
  const paths: PathArgument[] = [];
  const schema = isObject(tool.inputSchema) ? tool.inputSchema : {};
  const properties = isObject(schema.properties) ? schema.properties : {};
  for (const [name, prop] of Object.entries(properties)) {
    const arg = classify(name, prop);
    if (arg !== undefined) paths.push(arg);
  }
  const annotations = isObject(tool.annotations) ? tool.annotations : {};
  return { paths, readOnly: annotations.readOnlyHint === true };
}

/** A tool the server did not list: every argument with a path-like name is a path, and it may write. */
export function guessTool(args: Record<string, unknown>): ToolInfo {
  const paths = Object.keys(args)
    .filter((name) => PATH_ARGUMENT_NAMES.has(name))
    .map((name) => ({ name, uri: false }));
  return { paths, readOnly: false };
}

/** Apply a policy's `servers.<name>.tools.<tool>` entry: it replaces what the schema said. */
export function applyRule(info: ToolInfo, rule: ToolRule | undefined): ToolInfo {
  if (rule === undefined) return info;
  return {
    paths:
      rule.paths === undefined
        ? info.paths
        : rule.paths.map((name) => info.paths.find((p) => p.name === name) ?? { name, uri: false }),
    readOnly: rule.readOnly ?? info.readOnly,
  };
}

/** The tools of one server, learnt from `tools/list` pages. */
export class ToolTable {
  private readonly tools = new Map<string, ToolInfo>();

  /** Replace the table with the tools of a complete `tools/list`. */
  constructor(tools: unknown[] = []) {
    for (const tool of tools) {
      if (isObject(tool) && typeof tool.name === 'string')
        this.tools.set(tool.name, learnTool(tool));
    }
  }

  /** The tool's facts, with the policy's override applied; a tool not listed is guessed from `args`. */
  get(name: string, args: Record<string, unknown>, rule: ToolRule | undefined): ToolInfo {
    return applyRule(this.tools.get(name) ?? guessTool(args), rule);
  }

  /** Whether the list named tool `name`. */
  has(name: string): boolean {
    return this.tools.has(name);
  }

  /** How many tools are known. */
  get size(): number {
    return this.tools.size;
  }
}
