/**
 * MCP 2026-07-28 requests (no `initialize`): a server asks for roots by answering `tools/call`,
 * `prompts/get` or `resources/read` with an `InputRequiredResult` whose `inputRequests` include
 * `roots/list`, and the client retries the request, under a new id, with `inputResponses` and the
 * server's `requestState` echoed exactly (basic/patterns/mrtr). The proxy answers those roots
 * requests with the policy's roots, as it answers `roots/list` in an older session: alone, it
 * retries by itself and the host never sees them; beside other input requests, the host answers
 * the others and the proxy adds its roots answer to the host's retry. The host's own roots
 * answers never reach the server.
 *
 * Every host request is followed, of any method and in either era: the spec names three methods,
 * but a server may answer `tools/list` or `ping` `input_required` too, and the v2 client SDK
 * answers such a result whatever the method, with the host's roots (an attacker pass).
 */
import { memberText, removeMember, setMember } from '../protocol/json-text.js';
import { errorLine, idKey, idText, resultLine, type JsonObject } from '../protocol/messages.js';
import { RpcCode } from '../protocol/rpc-errors.js';
import type { Era } from './era.js';
import type { ProxyLogger } from './log.js';
import { isObject, type McpLine } from './mcp-line.js';
import { RecentKeys } from './recent-keys.js';

/** Rounds of roots answers the proxy gives one request before it stops the server asking. */
const MAX_ROOTS_ROUNDS = 3;
/** Requests-state entries remembered for the host's retries. */
const MAX_OWED = 256;

/**
 * The requests whose answer may be `input_required` (basic/patterns/mrtr, "Supported Requests").
 * Every request is followed all the same (a server may answer any, and a host's SDK answers it).
 */
const INPUT_REQUIRED_METHODS: ReadonlySet<string> = new Set([
  'tools/call',
  'prompts/get',
  'resources/read',
]);

/**
 * Whether relaying `line` may wait for the policy's roots: a 2026-07-28 request the spec lets be
 * answered `input_required`, or a retry (any method, either era) whose answers may be replaced.
 */
export function mayWaitForRoots(line: McpLine, era: Era): boolean {
  if (era === 'modern' && INPUT_REQUIRED_METHODS.has(line.method ?? '')) return true;
  return 'inputResponses' in line.params || 'requestState' in line.params;
}

/** What the input-request logic needs from the rest of the proxy. */
export interface InputRequiredOptions {
  log: ProxyLogger;
  /** The policy's roots as the JSON text of a `roots/list` result (waiting a while for the daemon). */
  rootsAnswer: () => Promise<string>;
  /** Write one line to the server, or to the host. */
  toServer: (data: Buffer | string) => void;
  toHost: (data: Buffer | string) => void;
  /** The host's request `hostKey` is answered (or will be by the host's own retry). */
  settled: (hostKey: string) => void;
  /** The prefix of the ids of the proxy's own retries (the host's ids never start with it). */
  idPrefix: string;
  /**
   * Which of the daemon's lists the server's roots are from (daemon-link.ts `listMark`): a
   * request was checked under one, and the proxy retries it only under the same.
   */
  listMark?: () => string;
  /**
   * Said once, when a tool call fails and the server has not asked for roots in this session:
   * what would give it its roots, or undefined when it has them another way (or none to have).
   */
  unaskedRootsHint?: () => string | undefined;
}

/** A host request on its way: the id the host gave it, and its text as the host sent it. */
interface Flight {
  hostIdText: string;
  hostKey: string;
  method: string;
  /** The host's request, whose params each retry of the proxy's starts from. */
  text: string;
  /** Rounds of roots answers given so far. */
  rounds: number;
  /** The daemon's list the request was checked under, when relayed. */
  mark: string | undefined;
}

/** Answers a 2026-07-28 server's roots input requests in the host's place. */
export class InputRequired {
  /** Requests the server has not answered, by the key of the id the server saw. */
  private readonly legs = new Map<string, Flight>();
  /** For each host request in flight, the key of the id of its current leg. */
  private readonly legOfHost = new Map<string, string>();
  /** The roots input keys owed to the host's retry, by the `requestState` text ('' for none). */
  private readonly owed = new Map<string, string[]>();
  /** Every input key under which the server asked for roots/list. */
  private readonly rootsInputKeys = new RecentKeys();
  private nextRetry = 1;
  /** Whether the server asked for roots in this session, and whether the hint was given. */
  private rootsAsked = false;
  private hinted = false;

  constructor(private readonly options: InputRequiredOptions) {}

  /**
   * Relay a host request (`text`: its line as the server should see it), adding owed roots answers;
   * nothing is sent once `pending.signal` aborts (the host cancelled it while the roots were
   * awaited), and `pending.sent` runs in the same step as the send.
   */
  async relay(
    line: McpLine,
    text: string,
    pending?: { signal: AbortSignal; sent: () => void },
  ): Promise<void> {
    const hostKey = line.idKey;
    const hostIdText = line.idText;
    const responses = line.params.inputResponses;
    if (isObject(responses) || typeof line.params.requestState === 'string') {
      text = await this.withRootsAnswers(text, isObject(responses) ? responses : {});
      if (pending?.signal.aborted === true) return;
    }
    pending?.sent();
    if (hostKey !== undefined && hostIdText !== undefined) {
      const mark = this.options.listMark?.();
      const flight = {
        hostIdText,
        hostKey,
        method: line.method ?? 'a request',
        text,
        rounds: 0,
        mark,
      };
      this.legs.set(hostKey, flight);
      this.legOfHost.set(hostKey, hostKey);
    }
    this.options.toServer(text === line.text ? line.bytes : text);
  }

  /** The server is gone or replaced: no request of the host's is followed any longer. */
  forgetAll(): void {
    this.legs.clear();
    this.legOfHost.clear();
  }

  /** The host cancelled `hostKey`: returns the id text of the proxy's retry to cancel too, if any. */
  forget(hostKey: string): string | undefined {
    const leg = this.legOfHost.get(hostKey);
    this.legOfHost.delete(hostKey);
    if (leg === undefined) return undefined;
    this.legs.delete(leg);
    return leg === hostKey ? undefined : idText(leg.slice(2));
  }

  /**
   * Whether the server already answered the host's request `hostKey` under the host's id (with
   * `input_required`, now retried or about to be): another answer under that id is not the host's.
   */
  answeredUnderHostId(hostKey: string): boolean {
    return this.legOfHost.has(hostKey) && !this.legs.has(hostKey);
  }

  /** Handle the server's answer; true when it belonged to a request relayed here (and was handled). */
  onAnswer(line: McpLine): boolean {
    const key = line.idKey;
    const flight = key === undefined ? undefined : this.legs.get(key);
    if (key === undefined || flight === undefined) return false;
    this.legs.delete(key);
    const result = line.msg?.result;
    const inputs = isObject(result) ? result.inputRequests : undefined;
    if (isObject(result) && result.resultType === 'input_required' && isObject(inputs)) {
      const rootsKeys = Object.keys(inputs).filter(
        (k) => isObject(inputs[k]) && inputs[k].method === 'roots/list',
      );
      if (rootsKeys.length > 0) {
        this.rootsAsked = true;
        void this.answerRoots(line, flight, inputs, rootsKeys).catch((err: unknown) =>
          this.options.log.error(`answering roots/list input requests: ${String(err)}`),
        );
        return true;
      }
    }
    if (flight.method === 'tools/call' && isObject(result) && result.isError === true) {
      this.hintUnaskedRoots();
    }
    this.toHost(line, key, flight);
    return true;
  }

  /**
   * A 2026-07-28 server gets roots only by asking in a request; many never do and take their
   * directories on the command line. Its failed call then reads as the server's own error
   * ("No allowed directories"), with nothing pointing at `{roots}`: said once, in the log.
   */
  private hintUnaskedRoots(): void {
    if (this.rootsAsked || this.hinted) return;
    const hint = this.options.unaskedRootsHint?.();
    if (hint === undefined) return;
    this.hinted = true;
    this.options.log.warn(hint);
  }

  /** Pass an answer to the host under the host's own id. */
  private toHost(line: McpLine | string, legKey: string, flight: Flight): void {
    this.legOfHost.delete(flight.hostKey);
    this.options.settled(flight.hostKey);
    if (typeof line === 'string') this.options.toHost(line);
    else if (legKey === flight.hostKey) this.options.toHost(line.bytes);
    else this.options.toHost(setMember(line.text, 'id', flight.hostIdText));
  }

  /** The host's retry with every roots answer the policy's: its own replaced, the owed ones added. */
  private async withRootsAnswers(text: string, hostResponses: JsonObject): Promise<string> {
    const paramsText = memberText(text, 'params') ?? '{}';
    const original = memberText(paramsText, 'inputResponses');
    let responses = original !== undefined && original.startsWith('{') ? original : '{}';
    const stateText = memberText(paramsText, 'requestState');
    const owed = this.owed.get(stateText ?? '') ?? [];
    const replace = Object.entries(hostResponses)
      .filter(([k, v]) => this.rootsInputKeys.has(k) || (isObject(v) && 'roots' in v))
      .map(([k]) => k);
    if (owed.length === 0 && replace.length === 0) return text;
    const answer = await this.options.rootsAnswer();
    for (const k of replace) {
      this.options.log.info(`replaced the host’s answer to roots/list (${k}) with the policy’s`);
      responses = setMember(responses, k, answer);
    }
    for (const k of owed) responses = setMember(responses, k, answer);
    if (responses === original) return text;
    return setMember(text, 'params', setMember(paramsText, 'inputResponses', responses));
  }

  /** The server asked for roots: answer them, alone by a retry, beside others through the host. */
  private async answerRoots(
    line: McpLine,
    flight: Flight,
    inputs: JsonObject,
    rootsKeys: string[],
  ): Promise<void> {
    for (const k of rootsKeys) this.rootsInputKeys.add(k);
    const resultText = memberText(line.text, 'result') ?? '{}';
    const stateText = memberText(resultText, 'requestState');
    if (rootsKeys.length < Object.keys(inputs).length) {
      // Others remain for the host: pass them on, and add ours when the host retries.
      // No prototype: a key `__proto__` is the server's like any other, not the object's parent.
      const rest = Object.create(null) as JsonObject;
      for (const [k, v] of Object.entries(inputs)) if (!rootsKeys.includes(k)) rest[k] = v;
      this.owe(stateText ?? '', rootsKeys);
      const newResult = setMember(resultText, 'inputRequests', JSON.stringify(rest));
      let text = setMember(line.text, 'result', newResult);
      if (line.idKey !== flight.hostKey) text = setMember(text, 'id', flight.hostIdText);
      this.toHost(text, line.idKey ?? '', flight);
      return;
    }
    const rounds = flight.rounds + 1;
    if (rounds > MAX_ROOTS_ROUNDS) {
      this.toHost(this.tooManyRounds(flight), line.idKey ?? '', flight);
      return;
    }
    const answer = await this.options.rootsAnswer();
    if (!this.legOfHost.has(flight.hostKey)) return; // cancelled meanwhile
    // The request was checked under the policy as it was when it came: a deny, a revoke or
    // lockdown since then would not apply to the retry, which is the proxy's own and checked by
    // nobody (an attacker pass). The host's call again is checked afresh.
    if (flight.mark !== undefined && flight.mark !== this.options.listMark?.()) {
      this.toHost(this.policyChanged(flight), line.idKey ?? '', flight);
      return;
    }
    let responses = '{}';
    for (const k of rootsKeys) responses = setMember(responses, k, answer);
    const paramsText = memberText(flight.text, 'params') ?? '{}';
    let params = setMember(paramsText, 'inputResponses', responses);
    // The exact requestState, or none when the server sent none (the spec forbids a stale one).
    params =
      stateText !== undefined
        ? setMember(params, 'requestState', stateText)
        : removeMember(params, 'requestState');
    // A retry is a new request: it needs an id of its own.
    const retryId = `${this.options.idPrefix}retry-${this.nextRetry++}`;
    const retryKey = idKey(idText(retryId))!;
    this.legs.set(retryKey, { ...flight, rounds });
    this.legOfHost.set(flight.hostKey, retryKey);
    this.options.toServer(
      setMember(setMember(flight.text, 'params', params), 'id', idText(retryId)),
    );
  }

  private owe(stateKey: string, keys: string[]): void {
    this.owed.delete(stateKey);
    this.owed.set(stateKey, keys);
    if (this.owed.size > MAX_OWED) this.owed.delete(this.owed.keys().next().value!);
  }

  /** The host's answer when the server asked for roots more than MAX_ROOTS_ROUNDS times. */
  private tooManyRounds(flight: Flight): string {
    const message = `the MCP server asked for roots/list ${MAX_ROOTS_ROUNDS + 1} times for one ${flight.method}; mcp-roots-proxy stopped it`;
    this.options.log.warn(message);
    return this.failure(flight, message);
  }

  /** The host's answer when the server's roots changed while it asked for them. */
  private policyChanged(flight: Flight): string {
    const message = `mcp-roots-proxy: the server's roots changed (the policy, a grant or lockdown) while it asked for them, so this ${flight.method} was not sent on; make it again, and it is checked against the policy as it is now`;
    this.options.log.info(message);
    return this.failure(flight, message);
  }

  /** `message` as the host's answer to `flight`: a tool's error result, else an error. */
  private failure(flight: Flight, message: string): string {
    if (flight.method === 'tools/call') {
      // A tool's failure is a tool result, so that the model reads it.
      const result = {
        resultType: 'complete',
        content: [{ type: 'text', text: message }],
        isError: true,
      };
      return resultLine(flight.hostIdText, JSON.stringify(result));
    }
    return errorLine(flight.hostIdText, { code: RpcCode.INTERNAL_ERROR, message });
  }
}
