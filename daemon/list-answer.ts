/**
 * `roots/list` answers kept per list and revision: a client asking again (a proxy before each
 * call, a poller) gets the same text, not a new one built and encoded per request.
 */
import type { ListRootsResult } from '../protocol/methods.js';
import { rawJson, rawJsonBytes, type RawJson, type RawJsonBytes } from '../protocol/raw-json.js';

/**
 * Up to this many bytes of roots an answer is one string, written in one call as any short line
 * is; a longer list stays the bytes of its runs, never joined or decoded (list-json.ts).
 */
export const SHORT_LIST_BYTES = 16 * 1024;

type ListAnswer = RawJson<ListRootsResult> | RawJsonBytes<ListRootsResult>;

export class ListAnswers {
  /** By the list's pieces (made once per list and shared by every server with that list). */
  private readonly kept = new WeakMap<
    readonly Buffer[],
    { revision: number; answer: ListAnswer }
  >();

  /** The answer for the list whose JSON is `parts`, at `revision` of the daemon `instance`. */
  of(parts: readonly Buffer[], revision: number, instance: string): ListAnswer {
    const kept = this.kept.get(parts);
    if (kept !== undefined && kept.revision === revision) return kept.answer;
    const meta = `,"_meta":{"mcp-roots/revision":${revision},"mcp-roots/instance":${JSON.stringify(instance)}}}`;
    let bytes = 0;
    for (const p of parts) bytes += p.length;
    // The pieces are UTF-8 of JSON.stringify output (lone surrogates escaped): decoding them
    // and encoding the text again gives the very same bytes.
    const answer =
      bytes <= SHORT_LIST_BYTES
        ? rawJson<ListRootsResult>(
            `{"roots":${Buffer.concat(parts, bytes).toString('utf8')}${meta}`,
          )
        : rawJsonBytes<ListRootsResult>(['{"roots":', ...parts, meta]);
    this.kept.set(parts, { revision, answer });
    return answer;
  }
}
