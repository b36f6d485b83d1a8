/**
 * Asking the person, through the host's elicitation, to widen a server's roots when a call was
 * refused only because its path is outside every root (docs/policy.md "Asking the person").
 */
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Access, Grant, RefusalKind } from '../common/types.js';
import { asksAbout } from '../common/ask-rule.js';
import { jsonUnseenEscaped } from '../common/acted-on.js';
import { shellQuote } from '../common/shell-quote.js';
import { tooWide } from '../common/too-wide.js';
import type { AskAnswer } from '../protocol/methods.js';
import type { DaemonLink } from './daemon-link.js';
import type { ProxyLogger } from './log.js';
import { CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, type Era } from './era.js';
import { isObject, type McpLine } from './mcp-line.js';
import type { RootsHold } from './roots-hold.js';

/** One refused path the person may be asked about. */
export interface AskQuestion {
  tool: string;
  /** The local path the daemon refused (as the call gave it). */
  path: string;
  /** The canonical path the daemon decided on: where `path` leads, links resolved. */
  canonical: string;
  access: Access;
  refusal: RefusalKind;
  /** What an answer may grant (`askTargets`), fixed when the question is made. */
  targets: AskTarget[];
}

/** What an answer may grant: the canonical path itself, or its directory. */
export interface AskTarget {
  scope: 'path' | 'directory';
  path: string;
}

/**
 * The grants a question about `canonical` may offer, the default first: the path itself when it
 * is a directory, else its directory (most servers, the reference filesystem server among them,
 * take no single file as a root). Both are canonical: the person is shown, and grants, where the
 * path leads, never a spelling a link could re-point while they read. Neither is ever `/`, the
 * home directory or above it (common/too-wide.ts).
 */
export function askTargets(canonical: string, home: string): AskTarget[] {
  const path: AskTarget = { scope: 'path', path: canonical };
  const directory: AskTarget = { scope: 'directory', path: dirname(canonical) };
  const targets = isDirectory(canonical) ? [path, directory] : [directory, path];
  return targets.filter((t) => !tooWide(t.path, home));
}

/**
 * The targets a grant can be made of now: the daemon grants only a path that exists, so a write
 * of a new file is offered its directory alone (offering the file, then granting nothing, lost the
 * person's yes without a word).
 */
export function existingTargets(targets: readonly AskTarget[]): AskTarget[] {
  return targets.filter((t) => existsSync(t.path));
}

/** What the asker needs from the rest of the proxy. */
export interface AskPersonOptions {
  server: string;
  link: DaemonLink;
  hold: RootsHold;
  log: ProxyLogger;
  /** Send a request of the proxy's own to the host; rejects on error, time limit or close. */
  requestHost: (method: string, params: Record<string, unknown>) => Promise<unknown>;
  /** How long a refusal the person gave (or did not give) keeps the same question from coming back. */
  rememberMs: number;
  /** Resolves once the server has fetched a roots list holding `uri` (at once if it fetches none). */
  rootsServed: (uri: string) => Promise<void>;
  /** Resolves once a restart the new roots cause (a server started with `{roots}`) is done. */
  restarted: () => Promise<void>;
  /** The user's home directory, canonical: no question offers it, or anything above it. */
  home: string;
}

/** A person's answer as the host's `ElicitResult` gave it, or none within the limit. */
export interface PersonAnswer {
  answer: AskAnswer;
  content: Record<string, unknown>;
}

/** Read an `ElicitResult` the host sent (anything else is a cancel). */
export function readAnswer(result: unknown): PersonAnswer {
  const action = isObject(result) ? result.action : undefined;
  const answer = action === 'accept' ? 'accept' : action === 'decline' ? 'decline' : 'cancel';
  const content = isObject(result) && isObject(result.content) ? result.content : {};
  return { answer, content };
}

/** The lifetimes a person may pick, in seconds. */
const DURATIONS: Record<string, { seconds: number; title: string }> = {
  '10m': { seconds: 600, title: '10 minutes' },
  '1h': { seconds: 3600, title: '1 hour' },
  '1d': { seconds: 86_400, title: '1 day' },
};

/**
 * The command a person runs to allow what was refused: the directory the path is in, or the path
 * when it is a directory. Most servers (the reference filesystem server among them) take no
 * single file as a root, so a grant of the file alone would still be refused by the server.
 */
export function grantCommand(
  server: string,
  path: string,
  access: Access,
  rootsctl = 'rootsctl',
): string {
  const ro = access === 'read' ? ' --read-only' : '';
  const target = isDirectory(path) ? path : dirname(path);
  return `${rootsctl} grant ${shellQuote(server)} ${shellQuote(target)} --for 1h${ro}`;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * What a refusal is remembered by: the access and where the path leads, so that another
 * spelling of the same path (`a/./b`, `a//b`, a link to it) does not bring the question back;
 * and, when the person declined, the access and the grant the question offered first, so that
 * another file of a directory the person would not open does not put that grant to them again.
 */
function pathKey(q: AskQuestion): string {
  return `${q.access}\0path\0${q.canonical}`;
}

function offerKey(access: Access, target: AskTarget): string {
  return `${access}\0offer\0${target.path}`;
}

/** A refusal still remembered: until when, and the grant refused when it was not this path. */
export interface RememberedRefusal {
  until: number;
  offer?: string;
  /** How the question ended: declined, dismissed (cancel) or unanswered (timeout). */
  answer: AskAnswer;
  /** Set when the session asks nothing more for now: this many questions in a row went unaccepted. */
  quiet?: number;
}

/**
 * Questions in a row that may go unaccepted (declined, dismissed or unanswered) before the
 * session asks nothing more for the remembering time: each question is about another directory,
 * and an agent can name as many as the disk has. Two permission prompts refused are the end of
 * asking on a phone; three leave room for a question the person had not expected.
 */
export const QUIET_AFTER = 3;

/** Asks one question at a time and turns an accepted answer into a grant. */
export class AskPerson {
  /** Whether the host declared form elicitation in its `initialize`. */
  hostElicits = false;
  /** The host's `clientInfo.name`, for the question and the decision log. */
  client: string | undefined;
  private turn: Promise<unknown> = Promise.resolve();
  /** Questions open or waiting their turn. */
  private waiting = 0;
  /** `pathKey` and `offerKey` → until when (ms) a refused question is not asked again, and how it ended. */
  private readonly refused = new Map<string, { until: number; answer: AskAnswer }>();
  /** Questions unaccepted since the last accepted one, and until when the session is quiet. */
  private unaccepted = 0;
  private quiet: { until: number; answer: AskAnswer } | undefined;

  constructor(private readonly options: AskPersonOptions) {}

  /** The home directory no question offers. */
  get home(): string {
    return this.options.home;
  }

  /**
   * Whether the host can be asked in answer to `line`: a 2025 host says so once in `initialize`,
   * a 2026-07-28 one in each request's `_meta` (whose client name the decision log takes too).
   */
  elicits(line: McpLine, era: Era): boolean {
    if (era === 'legacy') return this.hostElicits;
    const meta = line.params._meta;
    if (!isObject(meta)) return false;
    const info = meta[CLIENT_INFO_KEY];
    if (isObject(info) && typeof info.name === 'string') this.client = info.name.slice(0, 200);
    const caps = meta[CLIENT_CAPABILITIES_KEY];
    return isObject(caps) && formElicitation(caps.elicitation);
  }

  /** Whether the policy lets this refusal be put to the person (the host aside). */
  askable(refusal: RefusalKind | undefined, access: Access): boolean {
    return asksAbout(this.options.link.ask, refusal, access);
  }

  /**
   * When the person refused this recently, the path or the grant the question would offer
   * first (its default): until when they are not asked again; else undefined.
   */
  refusedRecently(q: AskQuestion): RememberedRefusal | undefined {
    // What the person answered about this very path or grant comes first: the answer that also
    // made the session quiet is reported as that answer, not as a question never put.
    const path = this.remembered(pathKey(q));
    if (path !== undefined) return path;
    const first = q.targets[0];
    const offered = first === undefined ? undefined : this.remembered(offerKey(q.access, first));
    if (offered !== undefined) return { ...offered, offer: first!.path };
    if (this.quiet !== undefined && this.quiet.until > Date.now()) {
      return { ...this.quiet, quiet: QUIET_AFTER };
    }
    return undefined;
  }

  private remembered(key: string): { until: number; answer: AskAnswer } | undefined {
    const entry = this.refused.get(key);
    if (entry === undefined) return undefined;
    if (entry.until > Date.now()) return entry;
    this.refused.delete(key);
    return undefined;
  }

  /**
   * Ask (after any question already pending: one at a time); true once an accepted answer's grant
   * reached the server's roots. A question an earlier answer settled is not asked again, nor one
   * whose call `signal` says was cancelled before its turn came.
   */
  ask(q: AskQuestion, signal?: AbortSignal): Promise<boolean> {
    // A call the host cancelled while its question waited for its turn is not asked about.
    const mine = this.turn.then(() => (signal?.aborted === true ? false : this.askNow(q)));
    this.queue(mine);
    return mine;
  }

  /** Whether a question is open or waiting: a call that cannot wait for it is not asked now. */
  get busy(): boolean {
    return this.waiting > 0;
  }

  /** Resolves once no question is open or waiting its turn. */
  async idle(): Promise<void> {
    while (this.waiting > 0) await this.turn;
  }

  /**
   * Take the turn for a question the proxy puts to the host some other way (a 2026-07-28 input
   * request); the next question waits until `release` runs.
   */
  occupy(): () => void {
    let release!: () => void;
    this.queue(new Promise<void>((resolve) => (release = resolve)));
    return release;
  }

  private queue(question: Promise<unknown>): void {
    this.waiting++;
    this.turn = question.then(
      () => this.waiting--,
      () => this.waiting--,
    );
  }

  private async askNow(q: AskQuestion): Promise<boolean> {
    const { link, log } = this.options;
    if (this.refusedRecently(q) !== undefined) return false;
    // The answer this call waited for may have granted it already. The call's own check is in the
    // decision log; this look is not logged again.
    const now = await link.check(q.path, q.access, { record: false }).catch(() => undefined);
    if (now?.allowed === true) return true;
    if (now !== undefined && now.refusal !== q.refusal) return false;

    let answer: PersonAnswer;
    try {
      answer = readAnswer(
        await this.options.requestHost('elicitation/create', askParams(this.options.server, q)),
      );
    } catch (err) {
      log.info(`no answer to the ask about ${JSON.stringify(q.path)}: ${(err as Error).message}`);
      answer = { answer: 'timeout', content: {} };
    }
    return this.settle(q, answer);
  }

  /**
   * Act on the person's answer: a refusal is remembered and recorded; an acceptance becomes a
   * grant, and resolves true once the server has the new roots. The target is one the question
   * offered (`askTargets`), never a path the answer names; an answer choosing none is a cancel.
   */
  async settle(q: AskQuestion, given: PersonAnswer): Promise<boolean> {
    const { link, log } = this.options;
    const context = { tool: q.tool, ...(this.client !== undefined ? { client: this.client } : {}) };
    const { content } = given;
    // No scope chosen: the one the question offered first (its default).
    const chosen =
      content.scope === undefined ? q.targets[0] : q.targets.find((t) => t.scope === content.scope);
    let answer = given.answer;
    if (answer === 'accept' && chosen === undefined) {
      log.warn(
        `the answer to the ask about ${JSON.stringify(q.path)} chose no scope the question offered (${JSON.stringify(content.scope)}); taken as a cancel`,
      );
      answer = 'cancel';
    }
    if (answer !== 'accept' || chosen === undefined) {
      const until = Date.now() + this.options.rememberMs;
      this.refused.set(pathKey(q), { until, answer });
      // The grant the person was shown first and did not take, whether declined, dismissed or
      // left unanswered: another file of the same directory would put it to them again, once per
      // file the agent names. Not the other choices: a question about `proj/.secrets` that the
      // person declined says nothing of `proj`.
      const first = q.targets[0];
      if (first !== undefined) this.refused.set(offerKey(q.access, first), { until, answer });
      if (++this.unaccepted >= QUIET_AFTER) {
        this.quiet = { until, answer };
        this.unaccepted = 0;
      }
      await link.logAsk({ path: q.path, access: q.access, answer, ...context });
      return false;
    }
    this.unaccepted = 0;
    const target = chosen.path;
    const duration = DURATIONS[typeof content.duration === 'string' ? content.duration : ''];
    // Not given: the default the question showed (a host may send back only what the person
    // touched). Read as `=== true` alone, an accept without it granted read-write to a question
    // about a read, whose box showed "Read-only" ticked.
    const readOnly = typeof content.readOnly === 'boolean' ? content.readOnly : q.access === 'read';
    let grant: Grant;
    try {
      grant = await link.grant(target, {
        seconds: (duration ?? DURATIONS['10m']!).seconds,
        readOnly,
      });
    } catch (err) {
      log.warn(`the grant the person accepted failed: ${(err as Error).message}`);
      await link.logAsk({ path: q.path, access: q.access, answer, ...context });
      return false;
    }
    await link.logAsk({
      path: q.path,
      access: q.access,
      answer,
      ...context,
      granted: { path: grant.path, readOnly: grant.readOnly, expiresAt: grant.expires },
    });
    await this.rootsReached(grant.uri);
    return true;
  }

  /** Wait until the daemon listed the granted root and the server fetched it (the roots hold). */
  private async rootsReached(uri: string): Promise<void> {
    const { link, hold, rootsServed, restarted } = this.options;
    if (!(link.roots ?? []).some((r) => r.uri === uri)) {
      await new Promise<void>((resolve) => {
        const onRoots = (): void => {
          if (!(link.roots ?? []).some((r) => r.uri === uri)) return;
          clearTimeout(timer);
          link.off('roots', onRoots);
          resolve();
        };
        // A grant whose path is missing is never listed: the call's check then says why.
        const timer = setTimeout(() => {
          link.off('roots', onRoots);
          resolve();
        }, 5000);
        link.on('roots', onRoots);
      });
    }
    // A server whose command line holds its roots is restarted for them: the call goes to the
    // new one. Then the hold lets every call go after its time limit; the call the person allowed
    // waits for the server's own fetch of the list with its root, however busy the machine.
    await restarted();
    await rootsServed(uri);
    if (hold.closed) await hold.passed();
  }
}

/**
 * A name in a question: quoted and escaped as JSON, and every character a person could not see
 * (a zero-width space, a bidi override, a no-break space) spelled out as its escape.
 */
function shown(text: string): string {
  return jsonUnseenEscaped(JSON.stringify(text));
}

/** The longest tool name a question shows whole; the server chooses its tools' names. */
export const TOOL_NAME_SHOWN = 64;

/**
 * A tool's name in a question: at most `TOOL_NAME_SHOWN` characters, so that a name of a
 * thousand spaces cannot push the path out of a dialog that cuts or wraps its text, nor end on a
 * path of its own.
 */
function shownTool(name: string): string {
  const chars = Array.from(name);
  if (chars.length <= TOOL_NAME_SHOWN) return shown(name);
  return `${shown(chars.slice(0, TOOL_NAME_SHOWN).join(''))}… (cut: ${chars.length} characters)`;
}

/**
 * The `elicitation/create` params: every text the person reads is the proxy's own, and names
 * exactly what an answer grants. Ask only when `askTargets` offers something.
 */
export function askParams(server: string, q: AskQuestion): Record<string, unknown> {
  const path = shown(q.path);
  const why =
    q.refusal === 'read-only' ? 'which is in a read-only root' : 'which is outside every root';
  const leads = q.canonical === q.path ? '' : ` That path leads to ${shown(q.canonical)}.`;
  const message =
    `mcp-roots: the MCP server ${shown(server)} wants to ${q.access} ${path} ` +
    `(tool ${shownTool(q.tool)}), ${why} it may use.${leads} Allow it? Decline to refuse.`;
  return {
    message,
    requestedSchema: {
      type: 'object',
      properties: {
        scope: {
          type: 'string',
          title: 'What to allow',
          oneOf: q.targets.map((t) => ({ const: t.scope, title: targetTitle(t) })),
          default: q.targets[0]?.scope,
        },
        duration: {
          type: 'string',
          title: 'For how long',
          oneOf: Object.entries(DURATIONS).map(([key, d]) => ({ const: key, title: d.title })),
          default: '10m',
        },
        readOnly: {
          type: 'boolean',
          title: 'Read-only',
          default: q.access === 'read',
        },
      },
      required: ['scope', 'duration', 'readOnly'],
    },
  };
}

/** How a choice reads: a file alone is said to be of no use to most servers. */
function targetTitle(t: AskTarget): string {
  const path = shown(t.path);
  if (t.scope === 'directory') return `The directory ${path}`;
  return isDirectory(t.path)
    ? `Only ${path}`
    : `Only ${path} (a server that takes only directories, as the reference filesystem server does, cannot use a file alone)`;
}

/** Whether declared elicitation capabilities include forms (`{}` means form, 2025-06-18). */
export function formElicitation(elicitation: unknown): boolean {
  if (!isObject(elicitation)) return false;
  return Object.keys(elicitation).length === 0 || elicitation.form !== undefined;
}
