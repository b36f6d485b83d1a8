/** What the proxy knows about each tool: its input schema (which says where paths are), and whether it only reads. */
import { isObject } from '../common/is-object.js';
import type { ToolRule } from '../common/types.js';

/** A tool as enforcement sees it; `proxy/arguments.ts` finds the paths in a call from it. */
export interface ToolInfo {
  /** The listed `inputSchema`; undefined for a tool the server did not list (nothing is known). */
  inputSchema: unknown;
  /** The policy's `paths` for the tool: exactly these arguments are paths. */
  declaredPaths?: readonly string[];
  readOnly: boolean;
}

type Schema = Record<string, unknown>;

/** Learn a tool from its `tools/list` entry. */
export function learnTool(tool: Schema): ToolInfo {
  const annotations = isObject(tool.annotations) ? tool.annotations : {};
  return { inputSchema: tool.inputSchema, readOnly: annotations.readOnlyHint === true };
}

/** A tool the server did not list: its schema is unknown (every path-like name is a path), and it may write. */
export function guessTool(): ToolInfo {
  return { inputSchema: undefined, readOnly: false };
}

/** Apply a policy's `servers.<name>.tools.<tool>` entry: it replaces what the schema said. */
export function applyRule(info: ToolInfo, rule: ToolRule | undefined): ToolInfo {
  if (rule === undefined) return info;
  const out: ToolInfo = { ...info, readOnly: rule.readOnly ?? info.readOnly };
  if (rule.paths !== undefined) out.declaredPaths = rule.paths;
  return out;
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

  /** The tool's facts, with the policy's override applied; a tool not listed is guessed. */
  get(name: string, rule: ToolRule | undefined): ToolInfo {
    return applyRule(this.tools.get(name) ?? guessTool(), rule);
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
