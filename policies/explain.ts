/** `policy/explain` for one server: each rule that names it, and which roots it gave or took away. */
import type { AskRule, ExplainResult, ExplainRule } from '../common/types.js';
import { covers } from './deny.js';
import type { Pos } from './model.js';
import { listedPath, toUri } from './paths.js';
import { holeIn, type Block, type ServerView } from './server-view.js';

/** The explanation of `server`'s roots from the blocks that match it and the view they make. */
export function explainServer(
  server: string,
  blocks: Block[],
  view: ServerView,
  ask: AskRule,
): ExplainResult {
  const listed = new Set(view.info.map((i) => i.canonical));
  const rules: ExplainRule[] = [];
  for (const b of blocks) {
    for (const e of b.entries) {
      const yielded = e.matches
        .filter((m) => listed.has(listedPath(m.canonical)))
        .map((m) => toUri(listedPath(m.canonical)));
      const rule: ExplainRule = {
        ...posOf(e.entry.pos),
        kind: 'root',
        path: e.entry.path,
        yielded,
      };
      if (yielded.length === 0) {
        const reason =
          e.reason ??
          (e.matches.some((m) => view.dropped.has(listedPath(m.canonical)))
            ? 'denied'
            : e.expired
              ? 'expired'
              : 'missing');
        rule.reason = reason;
      }
      rules.push(rule);
    }
  }
  for (const d of view.denies) {
    const affected = [...view.dropped].filter(([, k]) => k === d).map(([c]) => toUri(c));
    for (const i of view.info) {
      if (covers(d, i.canonical) || (d.inMeta && !d.entriesOnly && holeIn(d, i.canonical)))
        affected.push(i.root.uri);
    }
    if (d.source === 'protected' && affected.length === 0) continue;
    rules.push({
      ...(d.pos ? posOf(d.pos) : { file: '<built-in>', line: 0, column: 0 }),
      kind: d.source === 'protected' ? 'protected' : 'deny',
      path: d.display,
      yielded: affected,
    });
  }
  return { server, declared: blocks.length > 0, roots: view.roots, rules, ask };
}

function posOf(pos: Pos): { file: string; line: number; column: number } {
  return { file: pos.file, line: pos.line, column: pos.column };
}
