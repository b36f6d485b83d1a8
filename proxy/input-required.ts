/**
 * MCP 2026-07-28 sessions (no `initialize`): a server asks for roots by answering a request with an
 * `InputRequiredResult` whose `inputRequests` include `roots/list`, and the host retries the
 * request with `inputResponses`. The proxy answers those roots requests with the policy's roots,
 * as it answers a `roots/list` request in an older session, and the host never sees them.
 */
import { setMember, memberText } from '../protocol/json-text.js';
import { errorLine, idKey, type JsonObject } from '../protocol/messages.js';
import { RpcCode } from '../protocol/rpc-errors.js';
import type { ProxyLogger } from './log.js';
import { isObject, type McpLine } from './mcp-line.js';
import { RecentKeys } from './recent-keys.js';

/** How often one request is retried with roots answers before the proxy gives up. */
const MAX_ROOTS_RETRIES = 3;

/** What the input-request logic needs from the rest of the proxy. */
export interface InputRequiredOptions {
  log: ProxyLogger;
  /** The policy's roots as the JSON text of a `roots/list` result. */
  rootsAnswer: () => string;
  /** Write one line to the server, or to the host. */
  toServer: (data: Buffer | string) => void;
  toHost: (data: Buffer | string) => void;
  /** Remember a request sent to the server, so that the host gets an answer if the server dies. */
  track: (idText: string, method: string) => void;
}

/** A host request in flight: its text as last sent, its id and its method. */
interface InFlight {
  text: string;
  idText: string;
  method: string;
}

/** Answers a 2026-07-28 server's roots input requests in the host's place. */
export class InputRequired {
  /** Host requests in flight, by id key. */
  private readonly inFlight = new Map<string, InFlight>();
  /** Roots answers owed to the host's next retry, by input key. */
  private readonly owedInputs = new Map<string, string>();
  /** How often the proxy has retried each request with roots answers. */
  private readonly retries = new Map<string, number>();
  /** The input keys under which the server asked for roots/list. */
  private readonly rootsInputKeys = new RecentKeys();

  constructor(private readonly options: InputRequiredOptions) {}

  /** Relay a host request, remembering it and adding the roots answers owed to it. */
  relay(line: McpLine): void {
    const key = line.idKey;
    const idText = line.idText;
    if (key === undefined || idText === undefined) {
      this.options.toServer(line.bytes);
      return;
    }
    const responses = line.params.inputResponses;
    const text = isObject(responses) ? this.withOwedInputs(line.text, responses) : line.text;
    this.inFlight.set(key, { text, idText, method: line.method ?? 'a request' });
    this.options.toServer(text === line.text ? line.bytes : text);
  }

  /** The host cancelled request `key`: it will not be retried. */
  forget(key: string): void {
    this.inFlight.delete(key);
  }

  /** Handle the server's answer to a host request; true when the proxy consumed it. */
  onAnswer(line: McpLine): boolean {
    const key = line.idKey;
    if (key === undefined) return false;
    const request = this.inFlight.get(key);
    this.inFlight.delete(key);
    const result = line.msg?.result;
    if (request !== undefined && isObject(result) && this.answerInputs(line, request, result)) {
      return true;
    }
    this.retries.delete(key);
    return false;
  }

  /** The host's `inputResponses` with the owed roots answers added, and any of its own replaced. */
  private withOwedInputs(text: string, hostResponses: JsonObject): string {
    const paramsText = memberText(text, 'params') ?? '{}';
    const original = memberText(paramsText, 'inputResponses') ?? '{}';
    let responses = original;
    // A roots answer is the policy's, whether the proxy owes it, saw its key, or never saw it.
    for (const [k, v] of Object.entries(hostResponses)) {
      if (this.rootsInputKeys.has(k) || (isObject(v) && 'roots' in v)) {
        this.options.log.info(`replaced the host’s answer to roots/list (${k}) with the policy’s`);
        responses = setMember(responses, k, this.options.rootsAnswer());
      }
    }
    for (const [k, v] of this.owedInputs) responses = setMember(responses, k, v);
    this.owedInputs.clear();
    if (responses === original) return text;
    return setMember(text, 'params', setMember(paramsText, 'inputResponses', responses));
  }

  /** Answer roots/list input requests in the host's place; true when the answer was consumed. */
  private answerInputs(line: McpLine, request: InFlight, result: JsonObject): boolean {
    const { toHost, toServer, track, rootsAnswer } = this.options;
    const inputs = result.inputRequests;
    if (!isObject(inputs)) return false;
    const rootsKeys = Object.keys(inputs).filter(
      (k) => isObject(inputs[k]) && inputs[k].method === 'roots/list',
    );
    if (rootsKeys.length === 0) return false;
    for (const k of rootsKeys) this.rootsInputKeys.add(k);
    const answer = rootsAnswer();
    const resultText = memberText(line.text, 'result') ?? '{}';
    if (rootsKeys.length < Object.keys(inputs).length) {
      // Others remain for the host: pass them on, and add ours when the host retries.
      const rest: JsonObject = {};
      for (const [k, v] of Object.entries(inputs)) if (!rootsKeys.includes(k)) rest[k] = v;
      for (const k of rootsKeys) this.owedInputs.set(k, answer);
      const newResult = setMember(resultText, 'inputRequests', JSON.stringify(rest));
      toHost(setMember(line.text, 'result', newResult));
      return true;
    }
    // Only roots were asked for: retry the request with the answers, as the host would have.
    const key = idKey(request.idText);
    if (key !== undefined) {
      const tries = (this.retries.get(key) ?? 0) + 1;
      if (tries > MAX_ROOTS_RETRIES) {
        // A server that asks for roots again and again would keep the proxy retrying for ever.
        this.retries.delete(key);
        toHost(
          errorLine(request.idText, {
            code: RpcCode.INTERNAL_ERROR,
            message: `the MCP server asked for roots/list ${MAX_ROOTS_RETRIES + 1} times for one request; mcp-roots-proxy gave up`,
          }),
        );
        return true;
      }
      this.retries.set(key, tries);
    }
    const paramsText = memberText(request.text, 'params') ?? '{}';
    let responses = '{}';
    for (const k of rootsKeys) responses = setMember(responses, k, answer);
    let newParams = setMember(paramsText, 'inputResponses', responses);
    const state = memberText(resultText, 'requestState');
    if (state !== undefined) newParams = setMember(newParams, 'requestState', state);
    const retry = setMember(request.text, 'params', newParams);
    if (key !== undefined) this.inFlight.set(key, { ...request, text: retry });
    // Still owed to the host: answered with an error if the server dies before the retry's answer.
    track(request.idText, request.method);
    toServer(retry);
    return true;
  }
}
