/** Tables for people; `--json` prints the protocol's objects instead. */
import { fileURLToPath } from 'node:url';
import { tildify } from '../common/locations.js';
import {
  formatPolicyError,
  type AskRule,
  type CheckResult,
  type ExplainResult,
  type PolicyError,
  type Root,
} from '../common/types.js';
import { columns } from './io.js';
import { closest } from '../common/levenshtein.js';
import { inLine, visibleText } from './terminal-text.js';

/** A root's path for people, `~` for the home directory. */
export function rootPath(root: Root, home: string): string {
  return tildify(fileURLToPath(root.uri), home);
}

/** Time left until an instant, e.g. `8s`, `29m`, `2h 5m`, `3d 4h`. */
export function timeLeft(iso: string, now: number): string {
  const ms = Date.parse(iso) - now;
  if (ms <= 0) return 'expired';
  if (ms <= 59_000) return `${Math.ceil(ms / 1000)}s`;
  const m = Math.ceil(ms / 60_000);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** The roots table of `list`. */
export function rootsTable(server: string, roots: Root[], home: string, now: number): string {
  if (roots.length === 0) return `${inLine(server)} has no roots.\n`;
  const rows = [['PATH', 'ACCESS', 'EXPIRES', 'NAME']];
  for (const r of roots) {
    const expires = r._meta['mcp-roots/expiresAt'];
    // Writable through a grant that ends before the root does: say when the writing ends.
    const writes = r._meta['mcp-roots/writableUntil'];
    const denies = r._meta['mcp-roots/deny']?.length ?? 0;
    rows.push([
      rootPath(r, home),
      (r._meta['mcp-roots/readOnly'] ? 'read-only' : 'read-write') +
        (writes ? ` for ${timeLeft(writes, now)}, then read-only` : '') +
        (denies > 0 ? ` (${denies} deny)` : ''),
      expires ? `in ${timeLeft(expires, now)}` : '-',
      r.name ?? '',
    ]);
  }
  return columns(rows);
}

/**
 * `list`'s answer for a name no entry of the policy matches: most likely a typo, so say so and
 * name the servers the policy has.
 */
export function noEntryLine(server: string, known: string[]): string {
  const others = known.filter((k) => k !== server);
  const near = closest(server, others);
  return (
    `No entry of the policy names ${JSON.stringify(server)} (deny by default).` +
    (near === undefined ? '' : ` Did you mean ${JSON.stringify(near)}?`) +
    (others.length > 0
      ? ` Servers in the policy: ${others.map(inLine).join(', ')}.\n`
      : ' The policy names no servers.\n')
  );
}

/** A note for a grant to a name no entry of the policy covered: its only root, or a typo. */
export function unnamedGrantLine(server: string, known: string[]): string {
  const near = closest(server, known);
  return (
    `no entry of the policy names ${JSON.stringify(server)}: this grant is all it has.` +
    (near === undefined ? '' : ` Did you mean ${JSON.stringify(near)}?`) +
    (known.length > 0 ? ` Servers in the policy: ${known.map(inLine).join(', ')}.` : '') +
    '\n'
  );
}

/**
 * A note for a name only the policy's `'*'` covers: its answer is `'*'`'s, which a typo gets too.
 * Naming the server in the policy (`NAME: {}`) says it is meant, and the note goes.
 */
export function catchAllLine(server: string, known: string[]): string {
  const others = known.filter((k) => k !== server);
  const near = closest(server, others);
  const q = JSON.stringify(server);
  return (
    `No entry of the policy names ${q}: it gets only what the '*' entry gives every server, as a typo would.` +
    (near === undefined ? '' : ` Did you mean ${JSON.stringify(near)}?`) +
    (others.length > 0 ? ` Servers in the policy: ${others.map(inLine).join(', ')}.` : '') +
    ` If ${q} is meant to have only the rules of '*', name it in the policy (\`${inLine(server)}: {}\` under \`servers:\`).\n`
  );
}

/** The one-line answer of `check`. */
export function checkLine(result: CheckResult): string {
  return `${result.allowed ? 'allowed' : 'denied'}: ${inLine(result.access)}: ${inLine(result.reason)}\n`;
}

/** What `check` adds under a refusal that mcp-roots-proxy puts to the person before refusing. */
export const ASKED_FIRST_LINE =
  "asked first: mcp-roots-proxy puts this to the person where the host can ask (the policy's ask:); a yes becomes a temporary grant\n";

/** What `explain` says of the policy's `ask:` for the server; nothing when it never asks. */
export function askLine(rule: AskRule | undefined): string {
  if (rule === undefined || (!rule.outside && !rule.write)) return '';
  const about = [
    ...(rule.outside ? ['a path outside every root'] : []),
    ...(rule.write ? ['a write in a read-only root'] : []),
  ];
  return `Asks the person (mcp-roots-proxy, where the host can ask) about ${about.join(' and about ')}.\n`;
}

/** A deny rule that matched nothing under any root: noise unless asked for (`--all`). */
function noEffectDeny(r: ExplainResult['rules'][number]): boolean {
  return r.kind === 'deny' && r.yielded.length === 0;
}

/** The rules table of `explain`; deny rules that affect nothing are counted, not listed, unless `all`. */
export function explainTable(
  result: ExplainResult,
  home: string,
  opts: { all: boolean } = { all: false },
): string {
  const rows = [['WHERE', 'KIND', 'RULE', 'YIELDED']];
  const shown = opts.all ? result.rules : result.rules.filter((r) => !noEffectDeny(r));
  for (const r of shown) {
    const where = r.line === 0 ? r.file : `${tildify(r.file, home)}:${r.line}:${r.column}`;
    const listed = r.yielded.map((u) => tildify(fileURLToPath(u), home)).join(', ');
    // A root rule yields roots; a deny or a protected path yields none, and names the roots it
    // takes something from.
    const yielded =
      r.yielded.length === 0
        ? `nothing (${r.reason ?? 'no effect'})`
        : r.kind === 'root'
          ? listed
          : `in ${listed}`;
    rows.push([where, r.kind, r.path, yielded]);
  }
  const head = `${inLine(result.server)}: ${result.roots.length} root${result.roots.length === 1 ? '' : 's'}\n`;
  const hidden = result.rules.length - shown.length;
  const foot =
    (hidden > 0
      ? `(${hidden} deny rule${hidden === 1 ? ' that affects' : 's that affect'} nothing here not shown; --all shows them)\n`
      : '') + askLine(result.ask);
  if (shown.length > 0) return head + columns(rows) + foot;
  // Only deny rules that affect nothing: none gives it a root.
  if (hidden > 0) return head + 'No rule of the policy gives it roots (deny by default).\n' + foot;
  return head + 'No rule of the policy applies to it (deny by default).\n' + foot;
}

/** Problems sorted by file, line and column (stable, so one spot keeps the engine's order). */
export function sortProblems(list: PolicyError[]): PolicyError[] {
  return [...list].sort(
    (a, b) =>
      (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) || a.line - b.line || a.column - b.column,
  );
}

/** One policy error or warning on one line, with `~` for the home directory. */
export function problemLine(e: PolicyError, home: string): string {
  return inLine(formatPolicyError({ ...e, file: tildify(e.file, home) }));
}

/** Policy errors and warnings, one per line. */
export function problemLines(kind: 'error' | 'warning', list: PolicyError[], home: string): string {
  return list.map((e) => `${kind}: ${problemLine(e, home)}\n`).join('');
}

/**
 * An instant as every table and line of rootsctl shows it: local time, to the second, what a
 * person compares with their own clock (`--json` keeps the protocol's UTC). A text that is no
 * time (from an odd daemon, or a decision log) is shown escaped as it is.
 */
export function localTime(iso: string): string {
  const d = new Date(iso);
  // String(): what a daemon sends is typed, not checked, here.
  if (typeof iso !== 'string' || Number.isNaN(d.getTime())) return visibleText(String(iso));
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}
