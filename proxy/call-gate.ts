/**
 * The check of each request that names files (`tools/call`, `resources/read`, `prompts/get`,
 * `completion/complete`, `resources/subscribe`, `subscriptions/listen`, and any method MCP does
 * not define) against the policy before it reaches the server.
 */
import { RootsError } from '../common/errors.js';
import type { Access } from '../common/types.js';
import type { JsonObject } from '../protocol/messages.js';
import { RpcCode, type RpcErrorObject } from '../protocol/rpc-errors.js';
import { CallCancelled, throwIfCancelled, untilCancelled } from './abortable.js';
import { pathValues, type ArgumentRefusal, type PathValue } from './arguments.js';
import type { AskByInput } from './ask-by-input.js';
import {
  askTargets,
  existingTargets,
  grantCommand,
  type AskPerson,
  type RememberedRefusal,
} from './ask-person.js';
import type { DaemonLink } from './daemon-link.js';
import { daemonAwayHint } from './hint-commands.js';
import type { Era } from './era.js';
import { completionPaths } from './completion-paths.js';
import { checkValues, showPath, type Refusal } from './enforce.js';
import { isFileUri } from './file-uri.js';
import { MCP_HOST_METHODS } from './host-methods.js';
import type { ProxyLogger } from './log.js';
import { isObject, type McpLine } from './mcp-line.js';
import type { RootsHold } from './roots-hold.js';
import type { GitWrites } from './git-writes.js';
import { GIT_DIR_NAMED } from '../common/protected-patterns.js';
import type { ToolCatalog } from './tool-catalog.js';

/**
 * Why a call's `arguments` cannot be checked: MCP makes them a JSON object (or leaves them out),
 * and no path is found in anything else, while a lenient server parses a JSON string (the shape
 * model APIs give tool arguments in) and reads the path inside (test/hardening/proxy-argument-types.test.ts).
 */
function notAnObject(args: unknown): ArgumentRefusal | undefined {
  if (args === undefined || args === null || isObject(args)) return undefined;
  const kind = Array.isArray(args) ? 'an array' : `a ${typeof args}`;
  return {
    path: 'arguments',
    reason: `they are ${kind}, not a JSON object; mcp-roots-proxy checks the paths of an object only`,
  };
}

/** A check's verdict, where a check the host cancelled counts as not relayed. */
async function cancelledIsRefused(check: Promise<boolean>): Promise<boolean> {
  try {
    return await check;
  } catch (err) {
    if (err instanceof CallCancelled) return true;
    throw err;
  }
}

/** A call's arguments as an object to look into (none when they are not one). */
function argumentsOf(params: JsonObject): JsonObject {
  return isObject(params.arguments) ? params.arguments : {};
}

/** What the gate needs from the rest of the proxy. */
export interface CallGateOptions {
  server: string;
  link: DaemonLink;
  catalog: ToolCatalog;
  hold: RootsHold;
  /** Writes naming git's names, one at a time (git-writes.ts); the proxy marks them done. */
  gitWrites: GitWrites;
  log: ProxyLogger;
  asker: AskPerson;
  /** The asks of a 2026-07-28 request, which answers the call with the question. */
  askByInput: AskByInput;
  /** Answer a host request in the server's place, with a result or an error. */
  answerHost: (line: McpLine, answer: { result: JsonObject } | { error: RpcErrorObject }) => void;
}

/**
 * Decides whether a call may go on to the server; answers the host itself when it may not. Each
 * check watches the call's cancellation signal: once the host cancels the call, the check stops at
 * its next step (a daemon check, the roots hold, the person's answer), and the call is neither
 * relayed nor answered (MCP: no answer is owed for a cancelled request).
 */
export class CallGate {
  constructor(private readonly options: CallGateOptions) {}

  /**
   * Check a `tools/call`; true when it must not be relayed (refused and answered, or cancelled),
   * false when it may be relayed.
   */
  refusedToolCall(line: McpLine, era: Era, signal?: AbortSignal): Promise<boolean> {
    return cancelledIsRefused(this.checkToolCall(line, era, signal));
  }

  /** Check a `resources/read` of a `file:` URI; true when it must not be relayed. */
  refusedResourceRead(line: McpLine, era: Era, signal?: AbortSignal): Promise<boolean> {
    return cancelledIsRefused(this.checkResourceRead(line, era, signal));
  }

  /**
   * Check a `prompts/get`: a prompt may put a file it is given into the conversation, and hosts
   * let the model run prompts, so its arguments are checked as a tool's whose schema is unknown
   * (by name and by value), for reading. True when it must not be relayed.
   */
  refusedPromptGet(line: McpLine, era: Era, signal?: AbortSignal): Promise<boolean> {
    return cancelledIsRefused(this.checkPromptGet(line, era, signal));
  }

  /**
   * Check a `completion/complete`: a server completing a path lists the directory it lies in, so
   * the argument, the context's arguments and a `file:` resource template filled in with them are
   * checked as a prompt's arguments are, with each path's directory (completion-paths.ts). True
   * when it must not be relayed.
   */
  refusedCompletion(line: McpLine, era: Era, signal?: AbortSignal): Promise<boolean> {
    return cancelledIsRefused(this.checkCompletion(line, era, signal));
  }

  /**
   * Check a `resources/subscribe` (its `uri`) or a 2026-07-28 `subscriptions/listen` (its
   * `notifications.resourceSubscriptions`): a subscription tells the host each time the file
   * changes, so each `file:` URI is checked as `resources/read` checks it. True when it must not
   * be relayed.
   */
  refusedSubscription(line: McpLine, era: Era, signal?: AbortSignal): Promise<boolean> {
    return cancelledIsRefused(this.checkSubscription(line, era, signal));
  }

  /**
   * Why one of these `file:` URIs may not be read now, as `uri: reason`, or undefined: what a
   * restarted server is subscribed to again (server-swap.ts). Nothing is answered.
   */
  async uriRefusal(uris: readonly string[]): Promise<string | undefined> {
    const values = uris.filter(isFileUri).map((value) => ({ value, uri: true, where: 'uri' }));
    if (values.length === 0) return undefined;
    const refusal = await this.checkPaths(values, 'read', undefined, undefined);
    return refusal === undefined ? undefined : `${showPath(refusal.path)}: ${refusal.reason}`;
  }

  private async checkPromptGet(line: McpLine, era: Era, signal?: AbortSignal): Promise<boolean> {
    const { params } = line;
    const name = typeof params.name === 'string' ? params.name : '';
    const values = notAnObject(params.arguments) ?? pathValues(argumentsOf(params), undefined);
    return this.refusedPaths(
      line,
      era,
      values,
      'read',
      `prompt ${name}`,
      `the prompt ${name}`,
      signal,
    );
  }

  private async checkCompletion(line: McpLine, era: Era, signal?: AbortSignal): Promise<boolean> {
    const { what, values } = completionPaths(line.params);
    return this.refusedPaths(
      line,
      era,
      values,
      'read',
      `completion of ${what}`,
      `completing ${what}`,
      signal,
    );
  }

  /**
   * The paths in the params of a request or notification whose method MCP does not define (a
   * server's own, `x/read`), by name or by value, `_meta` aside; undefined when the method is
   * MCP's or its params name no path. Such a line cannot be read as its server reads it, so
   * what looks like a path is checked as a write.
   */
  otherPaths(line: McpLine): PathValue[] | ArgumentRefusal | undefined {
    const { method } = line;
    if (method === undefined || MCP_HOST_METHODS.has(method)) return undefined;
    const { _meta: _envelope, ...params } = line.params;
    const values = pathValues(params, undefined);
    return Array.isArray(values) && values.length === 0 ? undefined : values;
  }

  /**
   * Why the `otherPaths` of a notification may not reach the server, or undefined: nothing can be
   * answered, so the caller drops it and says why.
   */
  async otherNotificationRefusal(
    line: McpLine,
    values: PathValue[] | ArgumentRefusal,
  ): Promise<string | undefined> {
    const refusal = await this.checkPaths(values, 'write', line.method ?? '', undefined);
    return refusal === undefined ? undefined : `${showPath(refusal.path)}: ${refusal.reason}`;
  }

  /** Check `otherPaths` of a request; true when it must not be relayed (the host is answered). */
  refusedOtherRequest(
    line: McpLine,
    era: Era,
    values: PathValue[] | ArgumentRefusal,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const method = line.method ?? '';
    return cancelledIsRefused(
      this.refusedPaths(line, era, values, 'write', method, `the request ${method}`, signal),
    );
  }

  /**
   * Check `values` for `access` and answer the host with error -32602 when one is refused.
   * `label` names the request in the decision log, `subject` in the host's message.
   */
  private async refusedPaths(
    line: McpLine,
    era: Era,
    values: PathValue[] | ArgumentRefusal,
    access: Access,
    label: string,
    subject: string,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    const { hold, log, answerHost } = this.options;
    if (hold.closed) await untilCancelled(hold.passed(), signal);
    if (Array.isArray(values) && values.length === 0) return false;
    const refusal = await this.checkPaths(values, access, label, signal);
    if (refusal === undefined) return false;
    throwIfCancelled(signal);
    log.info(`refused ${line.method} (${label}): ${refusal.reason}`);
    answerHost(line, {
      error: {
        code: RpcCode.INVALID_PARAMS,
        message: `mcp-roots-proxy refused ${subject} on ${showPath(refusal.path)}: ${refusal.reason}${this.hint(refusal, line, era)}`,
      },
    });
    return true;
  }

  private async checkToolCall(line: McpLine, era: Era, signal?: AbortSignal): Promise<boolean> {
    const { hold, catalog, log, answerHost } = this.options;
    if (hold.closed) await untilCancelled(hold.passed(), signal);
    const { params } = line;
    const name = typeof params.name === 'string' ? params.name : '';
    const paths = await untilCancelled(catalog.callPaths(name, argumentsOf(params)), signal);
    const { access } = paths;
    const values = notAnObject(params.arguments) ?? paths.values;
    // An array of no paths needs no check; a refusal of the arguments themselves is answered.
    if (Array.isArray(values) && values.length === 0) return false;
    const key = line.idKey;
    if (
      access === 'write' &&
      key !== undefined &&
      Array.isArray(values) &&
      values.some((v) => GIT_DIR_NAMED.test(v.value))
    ) {
      await this.options.gitWrites.enter(key, signal);
    }
    const refusal = await this.checkAsking(line, era, name, paths.listed, values, access, signal);
    if (refusal === undefined) return false;
    if (refusal === 'asked') return true;
    throwIfCancelled(signal);
    log.info(`refused ${name}: ${refusal.reason}`);
    const text = `mcp-roots-proxy refused ${name} on ${showPath(refusal.path)}: ${refusal.reason}${this.hint(refusal, line, era)}`;
    // A tool's refusal is a tool result, so that the model reads why and can try another path.
    const content = [{ type: 'text', text }];
    // A 2026-07-28 client rejects a result without resultType; an older one ignores it.
    const result =
      era === 'modern'
        ? { resultType: 'complete', content, isError: true }
        : { content, isError: true };
    answerHost(line, { result });
    return true;
  }

  private async checkResourceRead(line: McpLine, era: Era, signal?: AbortSignal): Promise<boolean> {
    return this.refusedUriMember(line, era, signal);
  }

  /**
   * Check `params.uri`: a string as a URI; absent, for the server to refuse; any other shape is
   * refused, since a server reading it loosely (`${uri}` of `["file:///x"]`) finds a URI in it.
   */
  private refusedUriMember(line: McpLine, era: Era, signal?: AbortSignal): Promise<boolean> {
    const { uri } = line.params;
    if (uri === undefined || uri === null) return this.refusedUris(line, era, [], signal);
    if (typeof uri !== 'string') {
      return Promise.resolve(this.refuseUri(line, era, 'uri', 'params.uri is not a string'));
    }
    return this.refusedUris(line, era, [uri], signal);
  }

  private async checkSubscription(line: McpLine, era: Era, signal?: AbortSignal): Promise<boolean> {
    const { params } = line;
    if (line.method === 'resources/subscribe') {
      return this.refusedUriMember(line, era, signal);
    }
    const filter = params.notifications;
    const uris = isObject(filter) ? filter.resourceSubscriptions : undefined;
    if (uris === undefined || uris === null) return this.refusedUris(line, era, [], signal);
    if (!Array.isArray(uris) || !uris.every((u) => typeof u === 'string')) {
      const reason = 'notifications.resourceSubscriptions is not an array of URIs';
      return this.refuseUri(line, era, 'notifications.resourceSubscriptions', reason);
    }
    return this.refusedUris(line, era, uris, signal);
  }

  /**
   * Check each `file:` URI among `uris` for reading; the first refused one is answered with the
   * error `resources/read` gets. Other schemes are the server's.
   */
  private async refusedUris(
    line: McpLine,
    era: Era,
    uris: readonly string[],
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    const { hold } = this.options;
    if (hold.closed) await untilCancelled(hold.passed(), signal);
    // A URI any parser reads as `file:` (a leading space, a tab in the scheme) is checked too.
    const values = uris.filter(isFileUri).map((value) => ({ value, uri: true, where: 'uri' }));
    if (values.length === 0) return false;
    const refusal = await this.checkPaths(values, 'read', undefined, signal);
    if (refusal === undefined) return false;
    throwIfCancelled(signal);
    return this.refuseUri(line, era, refusal.path, refusal.reason);
  }

  private refuseUri(line: McpLine, era: Era, uri: string, reason: string): true {
    this.options.log.info(`refused ${line.method}: ${reason}`);
    this.options.answerHost(line, {
      error: {
        // 2026-07-28 retired -32002 (resource not found) for -32602.
        code: era === 'modern' ? RpcCode.INVALID_PARAMS : RpcCode.RESOURCE_NOT_FOUND,
        message: `mcp-roots-proxy refused ${showPath(uri)}: ${reason}`,
      },
    });
    return true;
  }

  /**
   * Check a call's paths; a refusal the person may lift is put to them (once per path), and the
   * call is checked again after a grant, so an accepted answer lets the same call through. In a
   * 2026-07-28 request the question is the call's answer ('asked'); the host's retry resumes it.
   */
  private async checkAsking(
    line: McpLine,
    era: Era,
    tool: string,
    listed: boolean,
    values: PathValue[] | ArgumentRefusal,
    access: Access,
    signal: AbortSignal | undefined,
  ): Promise<Refusal | 'asked' | undefined> {
    const { asker, askByInput } = this.options;
    const elicits = asker.elicits(line, era);
    const asked = new Set<string>(askByInput.askedBefore(line));
    // The check after a question the person did not accept is not logged again: the log has the
    // refusal that asked, and the answer (`asked:`), already.
    let record = true;
    for (;;) {
      const refusal = await this.checkPaths(values, access, tool, signal, record);
      const c = refusal?.checked;
      if (c === undefined || !elicits || !asker.askable(c.refusal, c.access)) {
        return refusal;
      }
      // A daemon that does not say where the path leads is not asked about it: the person must
      // be shown what a grant would open.
      if (c.canonical === undefined) return refusal;
      // A tool the server never listed would refuse the call anyway: the person is not asked to
      // open a directory for it (and the question would show a name nobody chose).
      if (!listed) {
        return {
          ...refusal!,
          reason: `${refusal!.reason}; not asked: the server lists no tool named ${JSON.stringify(tool)}`,
        };
      }
      const offered = askTargets(c.canonical, asker.home);
      if (offered.length === 0) {
        return {
          ...refusal!,
          reason: `${refusal!.reason}; not asked: allowing it would open ${c.canonical === '/' ? '/' : 'the home directory or a directory above it'} (only rootsctl grant or the policy can)`,
        };
      }
      const targets = existingTargets(offered);
      if (targets.length === 0) {
        return {
          ...refusal!,
          reason: `${refusal!.reason}; not asked: neither it nor its directory exists, and only a path that exists can be allowed (make the directory, then call again)`,
        };
      }
      const q = {
        tool,
        path: c.local,
        canonical: c.canonical,
        access: c.access,
        refusal: c.refusal!,
        targets,
      };
      const key = `${c.access}\0${c.local}`;
      // Asked already (or queued behind a question that ended as none was to be asked): the
      // refusal says what the person answered and until when, as for a call asked afresh.
      const remembered = asker.refusedRecently(q);
      if (remembered !== undefined || asked.has(key)) {
        if (remembered === undefined) return refusal;
        const grant = grantCommand(
          this.options.server,
          c.canonical,
          c.access,
          this.options.link.commands.rootsctl,
        );
        return { ...refusal!, reason: `${refusal!.reason}; ${notAskedAgain(remembered, grant)}` };
      }
      asked.add(key);
      if (era === 'modern') {
        if (asker.busy) {
          // Another question is open: its answer comes in the host's retry of that call, which
          // is admitted beside this one. Wait for it, then check again: the answer may cover
          // this call too, and otherwise this call asks next.
          asked.delete(key);
          await untilCancelled(asker.idle(), signal);
          continue;
        }
        const question = askByInput.ask(line, q, [...asked]);
        if (typeof question === 'string')
          return { ...refusal!, reason: `${refusal!.reason}; ${question}` };
        this.options.answerHost(line, { result: question });
        return 'asked';
      }
      // Checked again whatever the answer: the refusal then says what holds now (lockdown, say).
      // A cancelled call stops waiting for the answer; the question itself runs its course.
      record = await untilCancelled(asker.ask(q, signal), signal);
    }
  }

  /** For a refusal a grant would lift, the command that grants it (when nobody was asked). */
  private hint(refusal: Refusal, line: McpLine, era: Era): string {
    const c = refusal.checked;
    // Outside every root, or a write in a read-only root: a grant (read-write for a write) lifts
    // either; a deny, nothing but the policy.
    const grantable =
      c?.refusal === 'outside' || (c?.refusal === 'read-only' && c.access === 'write');
    if (!grantable || this.options.asker.elicits(line, era)) return '';
    const target = c.canonical ?? c.local;
    // The hint names where the path leads, never `/` or the home directory whole.
    if (askTargets(target, this.options.asker.home).length === 0) return '';
    return `; to allow it, run: ${grantCommand(this.options.server, target, c.access, this.options.link.commands.rootsctl)}`;
  }

  private async checkPaths(
    values: PathValue[] | ArgumentRefusal,
    access: Access,
    tool: string | undefined,
    signal: AbortSignal | undefined,
    record = true,
  ): Promise<Refusal | undefined> {
    const { link, asker } = this.options;
    const context = {
      ...(tool !== undefined ? { tool } : {}),
      ...(asker.client !== undefined ? { client: asker.client } : {}),
      ...(record ? {} : { record: false as const }),
    };
    const check = async (path: string, a: Access) => {
      try {
        return await link.check(path, a, context, signal);
      } catch (err) {
        if (err instanceof CallCancelled) throw err;
        // A path too long to send: that call alone is refused; the link stays up.
        if (err instanceof RootsError && err.code === 'PATH_INVALID') {
          return { allowed: false, access: a, reason: err.message };
        }
        // Fail closed: without the daemon's answer no path is allowed.
        return {
          allowed: false,
          access: a,
          reason: `${(err as Error).message}; ${daemonAwayHint(this.options.link.commands)}`,
        };
      }
    };
    const refusal = await checkValues(values, access, check, signal);
    // Refused here for its form (no daemon decision, which the daemon records itself): the
    // decision log shows it all the same (a user pass found `../../.ssh` missing from it).
    if (refusal !== undefined && refusal.checked === undefined && record) {
      void link.logRefused({ path: refusal.path, access, reason: refusal.reason, ...context });
    }
    return refusal;
  }
}

/** Why a question is not put: what the person answered, and until when. */
function notAskedAgain(remembered: RememberedRefusal, grant: string): string {
  const again = new Date(remembered.until).toISOString();
  if (remembered.quiet !== undefined) {
    return `not asked: the last ${remembered.quiet} questions to the person went unanswered, dismissed or declined, so this session asks nothing more before ${again}; to allow it, run: ${grant}`;
  }
  const what =
    remembered.offer === undefined ? 'it' : `a grant of ${JSON.stringify(remembered.offer)}`;
  const how =
    remembered.answer === 'decline'
      ? `the person refused ${what}`
      : remembered.answer === 'cancel'
        ? `the person dismissed the question about ${what}`
        : `the person did not answer the question about ${what}`;
  return `${how} and is not asked again before ${again}`;
}
