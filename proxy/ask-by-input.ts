/**
 * Asking the person in a 2026-07-28 request, which has no channel for a request of the proxy's
 * own: the proxy answers the host's `tools/call` with an `input_required` result whose input
 * request is its question (`elicitation/create`) and whose `requestState` is its own, and the
 * host's retry of the call brings the answer (basic/patterns/mrtr). The host echoes the state, so
 * its content is never trusted: it is only an unguessable key to what the proxy kept, used once,
 * bound to the call it was issued for, and forgotten when the answer limit passes.
 */
import { randomBytes } from 'node:crypto';
import { memberText, setMember } from '../protocol/json-text.js';
import type { JsonObject } from '../protocol/messages.js';
import { RpcCode, type RpcErrorObject } from '../protocol/rpc-errors.js';
import { askParams, readAnswer, type AskPerson, type AskQuestion } from './ask-person.js';
import { CLIENT_INFO_KEY } from './era.js';
import type { ProxyLogger } from './log.js';
import { isObject, McpLine } from './mcp-line.js';
import { RecentKeys } from './recent-keys.js';

/** The key of the proxy's question among a result's `inputRequests`. */
export const ASK_INPUT_KEY = 'mcp-roots-proxy/ask';
/** How every `requestState` of the proxy's own begins (a server's never should). */
export const ASK_STATE_PREFIX = 'mcp-roots-proxy/ask:';
/** Open questions kept at most (one per server is open at a time; this bounds a fault). */
const MAX_OPEN = 8;

/** What the input-request asker needs from the rest of the proxy. */
export interface AskByInputOptions {
  server: string;
  asker: AskPerson;
  log: ProxyLogger;
  /** How long the host has to bring the answer (`--ask-timeout`). */
  limitMs: number;
  /** Answer a host request in the server's place with an error. */
  answerError: (line: McpLine, error: RpcErrorObject) => void;
}

/** A question the host was given and whose answer its retry brings. */
interface OpenQuestion {
  q: AskQuestion;
  /** The call's identity (tool, arguments, client): the retry must repeat it exactly. */
  call: string;
  /** The call's params as they were when the proxy asked: the retry resumes from these. */
  paramsText: string;
  /** The questions the call has had, so that no round asks one twice. */
  asked: string[];
  timer: NodeJS.Timeout;
  release: () => void;
}

/** Puts questions to a 2026-07-28 host as input requests, and takes its retries' answers. */
export class AskByInput {
  /** Open questions by their state's token. */
  private readonly open = new Map<string, OpenQuestion>();
  /** Tokens answered or expired: a second use is named a replay. */
  private readonly spent = new RecentKeys(256);
  /** For a call resumed from an answer, the questions it had. */
  private readonly askedOf = new WeakMap<McpLine, string[]>();

  constructor(private readonly options: AskByInputOptions) {}

  /**
   * The `input_required` result that asks the person `q` about `line`, or, when another question
   * is open (the retry that settles it queues behind this call), why the call is not asked now.
   */
  ask(line: McpLine, q: AskQuestion, asked: string[]): JsonObject | string {
    const { asker, limitMs, server } = this.options;
    if (asker.busy || this.open.size >= MAX_OPEN) {
      return 'the person is answering another question now; call again once they answered';
    }
    const token = randomBytes(24).toString('base64url');
    const timer = setTimeout(() => void this.expire(token), limitMs);
    timer.unref();
    this.open.set(token, {
      q,
      call: callKey(line),
      paramsText: memberText(line.text, 'params') ?? '{}',
      asked,
      timer,
      release: asker.occupy(),
    });
    const params = { mode: 'form', ...askParams(server, q) };
    return {
      resultType: 'input_required',
      inputRequests: { [ASK_INPUT_KEY]: { method: 'elicitation/create', params } },
      requestState: `${ASK_STATE_PREFIX}${token}`,
    };
  }

  /** The questions a call resumed by `resume` has had (none for any other call). */
  askedBefore(line: McpLine): string[] {
    return this.askedOf.get(line) ?? [];
  }

  /**
   * A host request as the rest of the proxy should see it: unchanged unless it carries a state of
   * the proxy's own; then the answer is acted on and the call resumed as it was when asked (the
   * answer and the state never reach the server), or, for a state that is not an open question's
   * or a call that is not the one asked about, answered with an error and undefined returned.
   */
  async resume(line: McpLine): Promise<McpLine | undefined> {
    const state = line.params.requestState;
    if (typeof state !== 'string' || !state.startsWith(ASK_STATE_PREFIX)) return line;
    const token = state.slice(ASK_STATE_PREFIX.length);
    const open = this.take(token);
    if (open === undefined) {
      const why = this.spent.has(token)
        ? 'was answered or expired already'
        : 'is not one mcp-roots-proxy issued to this session';
      return this.refuse(line, `the requestState of the proxy's question ${why}`);
    }
    const { asker } = this.options;
    if (callKey(line) !== open.call) {
      // The question ends unanswered: a state is good for the call it was issued for only.
      await asker.settle(open.q, { answer: 'cancel', content: {} }).finally(open.release);
      return this.refuse(
        line,
        'the requestState was issued for another call (tool, arguments or client)',
      );
    }
    const responses = line.params.inputResponses;
    const answer = readAnswer(isObject(responses) ? responses[ASK_INPUT_KEY] : undefined);
    await asker.settle(open.q, answer).finally(open.release);
    // The host's fresh `_meta` (its progress token) with the params the call had when asked.
    const params = line.params;
    const metaText =
      '_meta' in params ? memberText(memberText(line.text, 'params')!, '_meta') : undefined;
    const paramsText =
      metaText === undefined ? open.paramsText : setMember(open.paramsText, '_meta', metaText);
    const resumed = new McpLine(Buffer.from(setMember(line.text, 'params', paramsText), 'utf8'));
    this.askedOf.set(resumed, open.asked);
    return resumed;
  }

  /** Remove an open question (its state is spent from now on). */
  private take(token: string): OpenQuestion | undefined {
    const open = this.open.get(token);
    if (open === undefined) return undefined;
    this.open.delete(token);
    this.spent.add(token);
    clearTimeout(open.timer);
    return open;
  }

  /** No retry came within the limit: the question is refused as unanswered. */
  private async expire(token: string): Promise<void> {
    const open = this.take(token);
    if (open === undefined) return;
    this.options.log.info(`no answer to the ask about ${JSON.stringify(open.q.path)} in time`);
    await this.options.asker
      .settle(open.q, { answer: 'timeout', content: {} })
      .finally(open.release);
  }

  private refuse(line: McpLine, why: string): undefined {
    const message = `mcp-roots-proxy: ${why}; nothing was granted. Call the tool again without requestState and inputResponses.`;
    this.options.log.warn(message);
    this.options.answerError(line, { code: RpcCode.INVALID_PARAMS, message });
    return undefined;
  }
}

/**
 * What a retry must repeat of the call: the tool, its arguments, and the client. Members are
 * compared in any order: a host that parses the call and writes it again may reorder them, and
 * it is still the same call (the line's repeated keys are refused before this).
 */
function callKey(line: McpLine): string {
  const { params } = line;
  const meta = isObject(params._meta) ? params._meta : {};
  return JSON.stringify(
    [line.method, params.name, params.arguments, meta[CLIENT_INFO_KEY]],
    (_key, value: unknown) =>
      isObject(value)
        ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : value,
  );
}
