/** Temporary grants and lockdown: the grants file, written only by the daemon (docs/protocol.md grants/*). */
import { realpath } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import type { Logger } from './logger.js';
import { stringify } from 'yaml';
import { errnoCode, ignoreMissing, RootsError } from '../common/errors.js';
import { SerialQueue } from '../common/serial-queue.js';
import { shellQuote } from '../common/shell-quote.js';
import { isGlob } from '../common/glob-dialect.js';
import { isInsideOrEqual } from '../common/segments.js';
import { canonicalHome, tooWide } from '../common/too-wide.js';
import { parseRfc3339, RFC3339_WANTED } from '../common/rfc3339.js';
import type { Grant } from '../common/types.js';
import {
  MAX_GRANT_SECONDS,
  nodeFs,
  parsePolicyText,
  readPolicyFile,
  throughProc,
  toUri,
} from '../policies/index.js';
import type { GrantAddParams, Methods } from '../protocol/methods.js';
import type { DecisionSink } from './decision-log.js';
import type { PolicyState } from './state.js';
import { writeAtomically } from './write-atomically.js';

export interface GrantStoreOptions {
  state: PolicyState;
  file: string;
  dir: string;
  /** Throws unless the state directory is still the one checked at start (daemon/state-dir.ts). */
  verifyStateDir?: () => Promise<void>;
  log: Logger;
  decisions: DecisionSink;
  /** The user's home directory: a grant from a question may not hold it (common/too-wide.ts). */
  home: string;
  now?: () => number;
}

type Handlers = Partial<{
  [M in keyof Methods]: (params: Methods[M]['params']) => Promise<Methods[M]['result']>;
}>;

/** A grant lasts one hour unless asked otherwise. */
export const DEFAULT_GRANT_SECONDS = 3600;

/** How many expired grants are remembered, to name in a refusal (`endedGrant`). */
const ENDED_KEPT = 64;

const HEADER = `# Temporary grants, written by mcp-rootsd when \`rootsctl grant\` asks.
# Change them with \`rootsctl grant\` and \`rootsctl revoke\`; put lasting access in the policy file.
`;

/** Reads and writes grants.yaml atomically (temp file, fsync, rename), one operation at a time. */
export class GrantStore {
  /** Grants file operations, one at a time. */
  private readonly queue = new SerialQueue();
  private readonly now: () => number;

  constructor(private readonly opts: GrantStoreOptions) {
    this.now = opts.now ?? Date.now;
    // An expired grant grants nothing, but left in the file it would show as a warning until the
    // next grant: take it out as soon as a recomputation (the expiry's own included) has run
    // past the earliest expiry the file holds. The file is read again whenever it was loaded
    // (written here, or edited by hand), not after every recomputation: a directory churning
    // under a glob recomputes many times a second.
    opts.state.on('resolved', () => {
      if (this.pruneAt !== undefined && this.now() >= this.pruneAt) this.schedulePrune();
    });
    opts.state.on('loaded', () => this.schedulePrune());
  }

  /** The earliest expiry in the grants file as last read (0: not read yet; undefined: none). */
  private pruneAt: number | undefined = 0;

  private schedulePrune(): void {
    // A grants file that cannot be read is reported by the load that serves it (daemon/state.ts).
    this.queue
      .run(() => this.pruneExpired())
      .catch((err: unknown) => this.opts.log.debug(`grants not pruned: ${String(err)}`));
  }

  /** The grants the file lost to their expiry, the latest last (at most `ENDED_KEPT`). */
  private readonly ended: { server: string; path: string; expires: number }[] = [];

  /**
   * Why a path refused as outside every root of `server` may be: a grant of it (or above it)
   * that expired and was pruned from the file, named with its time; undefined for none.
   */
  endedGrant(server: string, canonical: string): string | undefined {
    for (let i = this.ended.length - 1; i >= 0; i--) {
      const g = this.ended[i]!;
      if (g.server !== server || !isInsideOrEqual(canonical, g.path)) continue;
      return `its grant of ${g.path} expired at ${new Date(g.expires).toISOString()}`;
    }
    return undefined;
  }

  /** Rewrite the grants file without its expired grants, if it has any. */
  private async pruneExpired(): Promise<void> {
    const bytes = await this.readBytes();
    this.pruneAt = undefined;
    if (bytes === undefined) return;
    const parsed = parsePolicyText(bytes, this.opts.file);
    const now = this.now();
    const expired: { server: string; path: string; expires: number }[] = [];
    for (const b of parsed.policy?.servers ?? []) {
      for (const r of b.roots) {
        if (r.expires === undefined) continue;
        if (r.expires <= now) expired.push({ server: b.pattern, path: r.path, expires: r.expires });
        else this.pruneAt = Math.min(this.pruneAt ?? Infinity, r.expires);
      }
    }
    if (expired.length === 0) return;
    await this.write(await this.read());
    this.opts.log.info('removed expired grants from the grants file');
    this.ended.push(...expired);
    this.ended.splice(0, Math.max(0, this.ended.length - ENDED_KEPT));
    for (const g of expired) {
      this.opts.decisions.record({
        kind: 'grant-expired',
        server: g.server,
        path: g.path,
        expiresAt: new Date(g.expires).toISOString(),
      });
    }
  }

  /** The request handlers this store serves. */
  handlers(): Handlers {
    return {
      'grants/add': (params) => this.queue.run(() => this.addOrRecord(params)),
      'grants/list': () => this.queue.run(async () => ({ grants: await this.read() })),
      'grants/revoke': (params) => this.queue.run(() => this.revoke(params.server, params.path)),
      'policy/lockdown': async (params) => {
        const notice = await this.opts.state.setLockdown(params.on);
        const lockdown = this.opts.state.lockdown;
        return notice === undefined ? { lockdown } : { lockdown, notice };
      },
    };
  }

  /** `add`, and a grant it refuses goes to the decision log too: what was refused, and why. */
  private async addOrRecord(params: GrantAddParams): Promise<{ grant: Grant; notice?: string }> {
    try {
      return await this.add(params);
    } catch (err) {
      if (err instanceof RootsError) {
        this.opts.decisions.record({
          kind: 'grant-refused',
          server: params.server,
          path: params.path,
          reason: err.message,
        });
      }
      throw err;
    }
  }

  private async add(params: GrantAddParams): Promise<{ grant: Grant; notice?: string }> {
    const { state } = this.opts;
    if (state.lockdown) {
      throw new RootsError(
        'LOCKDOWN',
        `lockdown is on: no grants until \`${state.ctl('unlock')}\``,
        {
          hint: state.ctl('unlock'),
        },
      );
    }
    if (params.server.includes('*')) {
      throw new RootsError(
        'GRANT_DENIED',
        `a grant names one server exactly; "${params.server}" has a *. Put patterns in the policy file.`,
      );
    }
    if (!isAbsolute(params.path)) {
      throw new RootsError(
        'PATH_INVALID',
        `${params.path} is not an absolute path; give the full path`,
      );
    }
    let canonical: string;
    try {
      canonical = await realpath(params.path);
    } catch (err) {
      throw new RootsError(
        'PATH_NOT_FOUND',
        `${params.path} does not exist (${errnoCode(err) ?? String(err)}); a grant needs an existing file or directory`,
      );
    }
    // `/proc/self/cwd` here is the daemon's own directory, not the one the person meant.
    const proc = await throughProc(nodeFs(), params.path, canonical);
    if (proc !== undefined) throw new RootsError('PATH_INVALID', proc);
    if (params.asked === true) {
      // What the person was shown is what is granted, or nothing: never where a link leads now.
      if (canonical !== params.path) {
        throw new RootsError(
          'GRANT_DENIED',
          `${params.path} now leads to ${canonical} (a link on the way changed since the person was asked); nothing was granted`,
        );
      }
      if (tooWide(canonical, canonicalHome(this.opts.home))) {
        throw new RootsError(
          'GRANT_DENIED',
          `${canonical} is / or holds the home directory: too much to grant from a question; if it is meant, run ${state.ctl('grant')}`,
        );
      }
    }
    if (isGlob(canonical)) {
      // The grants file is a policy file, where a path that does not exist literally is a
      // pattern: once this directory were gone, the grant would match others.
      throw new RootsError(
        'GRANT_DENIED',
        `${canonical} has a name that reads as a pattern (*, ?, [...] or {a,b}), which the grants file would match against other names once it is gone; grant a parent directory instead`,
      );
    }
    if (canonical.includes('$')) {
      // The grants file is a policy file, where $ starts a variable: such a path cannot be written there.
      throw new RootsError(
        'GRANT_DENIED',
        `${canonical} contains a $, which a policy file would read as a variable; grant a parent directory instead`,
      );
    }
    const now = this.now();
    let expires: number;
    if (params.expires !== undefined) {
      const parsed = parseRfc3339(params.expires);
      if (parsed === undefined) {
        throw new RootsError('USAGE', `expires "${params.expires}" is not ${RFC3339_WANTED}`);
      }
      expires = parsed;
      if (expires <= now) {
        throw new RootsError(
          'USAGE',
          `expires ${params.expires} is in the past (it is ${new Date(now).toISOString()} now): ` +
            'give a later time, or a duration instead (rootsctl grant … --for 2h)',
        );
      }
    } else {
      expires = now + (params.seconds ?? DEFAULT_GRANT_SECONDS) * 1000;
    }
    if (expires - now > MAX_GRANT_SECONDS * 1000) {
      throw new RootsError(
        'GRANT_DENIED',
        `a grant may last at most ${MAX_GRANT_SECONDS / 86400} days; put lasting access in the policy file`,
      );
    }
    await state.fresh();
    let readOnly = params.readOnly ?? false;
    let notice: string | undefined;
    const deny = state.resolved.denyFor(params.server, canonical);
    if (deny?.access === 'all') {
      throw new RootsError(
        'GRANT_DENIED',
        `${canonical} is denied to ${params.server} by ${deny.reason}; a grant cannot open it`,
      );
    }
    if (deny && !readOnly) {
      readOnly = true;
      notice = `granted read-only: writing ${canonical} is denied by ${deny.reason}`;
    }
    const held = await this.read();
    const same = (g: Grant) => g.server === params.server && g.path === canonical;
    const grants = held.filter((g) => !same(g));
    // One grant per path: the new one replaces the old, its access and expiry with it, which the
    // person must hear (a user pass saw a read-only grant turn read-write without a word).
    const earlier = held.find(same);
    if (earlier !== undefined) {
      const was = `replaces the earlier ${earlier.readOnly ? 'read-only' : 'read-write'} grant of ${canonical}, which ran until ${earlier.expires}`;
      notice = notice === undefined ? was : `${notice}; ${was}`;
    }
    const grant: Grant = {
      server: params.server,
      path: canonical,
      uri: toUri(canonical),
      readOnly,
      expires: new Date(expires).toISOString(),
      ...(params.name !== undefined ? { name: params.name } : {}),
    };
    grants.push(grant);
    await this.write(grants);
    this.opts.log.info(
      `grant: ${grant.server} ${readOnly ? 'read-only' : 'read-write'} ${canonical} until ${grant.expires}`,
    );
    this.opts.decisions.record({
      kind: 'grant-added',
      server: grant.server,
      path: canonical,
      readOnly,
      expiresAt: grant.expires,
    });
    return notice ? { grant, notice } : { grant };
  }

  private async revoke(server: string, path: string | undefined): Promise<{ revoked: number }> {
    const grants = await this.read();
    let target = path;
    // A path that cannot be resolved (missing, ENAMETOOLONG, ELOOP, EACCES) is matched as written.
    if (path !== undefined) target = await realpath(path).catch(() => path);
    const keep = grants.filter(
      (g) =>
        !(g.server === server && (target === undefined || g.path === target || g.path === path)),
    );
    const revoked = grants.length - keep.length;
    if (revoked > 0) {
      await this.write(keep);
      for (const g of grants) {
        if (!keep.includes(g))
          this.opts.decisions.record({ kind: 'grant-revoked', server: g.server, path: g.path });
      }
      this.opts.log.info(
        `revoked ${revoked} grant${revoked === 1 ? '' : 's'} of ${server}${path ? ` on ${path}` : ''}`,
      );
    }
    return { revoked };
  }

  /** The unexpired grants in the file; a file that does not parse counts as none (and is replaced on the next write). */
  private async read(): Promise<Grant[]> {
    const bytes = await this.readBytes();
    if (bytes === undefined) return [];
    const parsed = parsePolicyText(bytes, this.opts.file);
    if (!parsed.policy) {
      this.opts.log.warn(
        `${this.opts.file} does not parse; it will be rewritten on the next grant`,
      );
      return [];
    }
    const now = this.now();
    const out: Grant[] = [];
    for (const block of parsed.policy.servers) {
      for (const root of block.roots) {
        if (root.expires === undefined || root.expires <= now || !isAbsolute(root.path)) continue;
        out.push({
          server: block.pattern,
          path: root.path,
          uri: toUri(root.path),
          readOnly: root.readOnly ?? false,
          expires: new Date(root.expires).toISOString(),
          ...(root.name !== undefined ? { name: root.name } : {}),
        });
      }
    }
    return out;
  }

  /**
   * The grants file's bytes, or undefined when there is none. The daemon started on a regular
   * file of the user's (daemon/state-dir.ts); one put in its place since (a FIFO, a directory, a
   * file too large) is refused with what to do, not passed on as an internal error.
   */
  private async readBytes(): Promise<Buffer | undefined> {
    await this.opts.verifyStateDir?.();
    try {
      return await ignoreMissing(readPolicyFile(this.opts.file));
    } catch (err) {
      const code = errnoCode(err);
      const what =
        code === 'ENOTREG' || code === 'EISDIR'
          ? 'it is not a regular file'
          : code === 'EFBIG'
            ? 'it is larger than a policy file may be'
            : `it cannot be read (${code ?? String(err)})`;
      throw new RootsError(
        'STATE_DIR_UNSAFE',
        `the grants file ${this.opts.file} is unusable: ${what}. The daemon did not write it: move it away (mv ${shellQuote(this.opts.file)} ${shellQuote(`${this.opts.file}.bad`)}), and the next grant writes a new one.`,
        { cause: err },
      );
    }
  }

  /** Write the grants file atomically, then apply it before answering. */
  private async write(grants: Grant[]): Promise<void> {
    // A Map, not an object: a server may be named `__proto__` or `constructor`.
    const servers = new Map<string, { roots: Record<string, unknown>[] }>();
    for (const g of grants) {
      let entry = servers.get(g.server);
      if (entry === undefined) servers.set(g.server, (entry = { roots: [] }));
      entry.roots.push({
        path: g.path,
        expires: g.expires,
        readOnly: g.readOnly,
        ...(g.name !== undefined ? { name: g.name } : {}),
      });
    }
    const text = HEADER + stringify({ version: 1, servers }, { lineWidth: 0 });
    // Never into a directory that someone else put in the state directory's place.
    await this.opts.verifyStateDir?.();
    await writeAtomically(this.opts.file, text, { kept: 'the previous grants are kept' });
    await this.opts.state.reload({ grants: true }, 'grants changed');
  }
}
