/** Reading the policy files: the main file, its includes, and the grants file (docs/policy.md rule 10). */
import { errnoCode } from '../common/errors.js';
import type { PolicyError } from '../common/types.js';
import { dirname } from 'node:path';
import { grantsShapeErrors } from './grants-shape.js';
import { expandPath, isGlob, policyDir, splitGlob } from './expand.js';
import { limitFs } from './fs.js';
import { expandGlob } from './glob.js';
import type {
  FsView,
  GlobLook,
  LoadedSources,
  ParsedPolicyFile,
  ParseResult,
  PolicyContext,
  PolicyFileRead,
  Pos,
} from './model.js';
import {
  fileWhere,
  isOwnStateFile,
  ownState,
  ownStateMessage,
  whereKey,
  type OwnState,
} from './own-state.js';
import { parsePolicyText, tooBigMessage } from './parse.js';
import {
  MAX_POLICY_FILES,
  MAX_POLICY_TOTAL_BYTES,
  tooManyBytesMessage,
  tooManyFilesMessage,
} from './policy-caps.js';

/**
 * Parses made ahead of a load, by file: the daemon parses an edited policy file during the settle
 * window it waits out for editors' multi-step saves (`prepareParse`), so that the reload after
 * the window has only to read the file again. A load takes a parse only when it reads the very
 * same bytes (anything else is parsed afresh), and takes it once: the parse is its own from then
 * on (loading fills in fields of it).
 */
const prepared = new Map<string, { bytes: Buffer; parsed: ParseResult }>();
const MAX_PREPARED = 16;

/** Parse `bytes`, read from `file`, for the next load of `file` (see `prepared`). */
export function prepareParse(file: string, bytes: Buffer): void {
  prepared.delete(file);
  if (prepared.size >= MAX_PREPARED) prepared.delete(prepared.keys().next().value!);
  prepared.set(file, { bytes, parsed: parsePolicyText(bytes, file) });
}

/** The parse of `bytes` from `file`: one made ahead for these bytes, else a new one. */
function parseOnce(bytes: Buffer, file: string): ParseResult {
  const ahead = prepared.get(file);
  prepared.delete(file);
  return ahead !== undefined && ahead.bytes.equals(bytes)
    ? ahead.parsed
    : parsePolicyText(bytes, file);
}

/**
 * Where the include chain stands, for cycle warnings. Files are known by the identity of what was
 * read (`dev:ino` of the descriptor, `PolicyFileRead.id`), never by a name resolved apart from
 * the read: a link swapped between a `realpath` and the read made a load read one file and record
 * another as loaded, so that a later include of that other file was skipped as "already loaded".
 */
interface Walk {
  ctx: PolicyContext;
  out: LoadedSources;
  /** Identities of files already loaded. */
  seen: Set<string>;
  /** The include chain: each file's identity, and its canonical name for messages. */
  stack: { id: string; real: string }[];
  /** Files read so far (MAX_POLICY_FILES), a file reached twice counted twice: each is a read. */
  reads: number;
  /** Bytes read so far (MAX_POLICY_TOTAL_BYTES). */
  bytes: number;
  /** Set once the policy is past a cap: nothing more is read. */
  capped: boolean;
  /** The view include globs are walked through: a few calls at a time, however many entries. */
  globFs: FsView;
  /** The daemon's own state files, none of which is read (policies/own-state.ts). */
  own: OwnState | undefined;
}

function err(pos: Pos, message: string): PolicyError {
  return { file: pos.file, line: pos.line, column: pos.column, message };
}

/**
 * Load the main policy file and, depth-first in the order written, every file it includes.
 * A missing main file is no error: it loads as no files at all.
 */
export async function loadPolicySources(
  mainFile: string,
  ctx: PolicyContext,
): Promise<LoadedSources> {
  return (await walkFrom(mainFile, ctx, true)).out;
}

/** Load one file and what it includes, from a fresh walk. */
async function walkFrom(file: string, ctx: PolicyContext, isMain: boolean): Promise<Walk> {
  const out: LoadedSources = {
    files: [],
    errors: [],
    warnings: [],
    includePatterns: [],
    globbed: [],
    located: [],
    missingMain: false,
    salvaged: [],
  };
  const walk: Walk = {
    ctx,
    out,
    seen: new Set(),
    stack: [],
    reads: 0,
    bytes: 0,
    capped: false,
    globFs: limitFs(ctx.fs),
    own: await ownState(ctx),
  };
  await loadFile(walk, file, undefined, isMain);
  return walk;
}

/** Load the grants file on its own; it may not include other files. */
export async function loadGrantsSource(
  grantsFile: string,
  ctx: PolicyContext,
): Promise<LoadedSources> {
  const { out } = await walkFrom(grantsFile, ctx, false);
  for (const f of out.files) {
    for (const inc of f.include)
      out.errors.push(err(inc.pos, 'include: the grants file cannot include other files'));
    f.include = [];
    out.errors.push(...grantsShapeErrors(f, ctx.now));
  }
  return out;
}

async function loadFile(
  walk: Walk,
  file: string,
  from: Pos | undefined,
  isMain: boolean,
): Promise<void> {
  const { ctx, out } = walk;
  if (walk.capped) return;
  if (!isMain && walk.own) {
    // Refused before it is read: a read would be compared by the watcher, and the daemon
    // writes these files on its own, so it would load again and again. Where the name led is
    // noted instead, for the watcher to compare.
    const where = await fileWhere(ctx.fs, file);
    if (where !== undefined && isOwnStateFile(walk.own, where)) {
      out.located.push({ path: file, where: whereKey(where) });
      out.errors.push(ownStateError(file, from, walk.own));
      return;
    }
  }
  let read: PolicyFileRead;
  try {
    read = await ctx.fs.readFile(file);
  } catch (e) {
    const code = errnoCode(e);
    if ((code === 'ENOENT' || code === 'ENOTDIR') && from === undefined) {
      if (isMain) out.missingMain = true;
      return;
    }
    if (code === 'EFBIG') {
      const size = (e as { size: number }).size;
      out.errors.push({ file, line: 1, column: 1, message: tooBigMessage(size) });
      return;
    }
    const what =
      code === 'ENOENT' || code === 'ENOTDIR'
        ? `included file ${file} does not exist (create it, or remove it from include)`
        : code === 'EISDIR'
          ? `${file} is a directory, not a policy file`
          : code === 'ENOTREG' || code === 'ENXIO'
            ? `${file} is not a regular file (a FIFO, device or socket cannot be a policy file)`
            : code === 'ELOOP'
              ? `cannot read ${file}: a symlink loop on its path (ELOOP); fix the link that leads back to itself`
              : `cannot read ${file} (${code ?? String(e)}); check its permissions`;
    out.errors.push(
      from ? err(from, `include: ${what}`) : { file, line: 1, column: 1, message: what },
    );
    return;
  }
  const { bytes, id, real } = read;
  if (!isMain && walk.own && isOwnStateFile(walk.own, read)) {
    // Moved there since the look above.
    out.errors.push(ownStateError(file, from, walk.own));
    return;
  }
  walk.reads++;
  walk.bytes += bytes.length;
  if (from && walk.reads > MAX_POLICY_FILES) {
    out.errors.push(err(from, tooManyFilesMessage(walk.reads)));
    walk.capped = true;
    return;
  }
  if (from && walk.bytes > MAX_POLICY_TOTAL_BYTES) {
    out.errors.push(err(from, tooManyBytesMessage(walk.bytes)));
    walk.capped = true;
    return;
  }
  if (walk.stack.some((s) => s.id === id)) {
    const chain = [...walk.stack.map((s) => s.real), real].join(' -> ');
    if (from) out.warnings.push(err(from, `include cycle: ${chain} (the file is loaded once)`));
    return;
  }
  if (walk.seen.has(id)) return;
  walk.seen.add(id);

  const parsed = parseOnce(bytes, file);
  out.errors.push(...parsed.errors);
  out.warnings.push(...parsed.warnings);
  const policy = parsed.policy ?? parsed.salvaged;
  if (!policy) return;
  // Relative paths: the main file's own directory (a link's own: the person named that path);
  // an included file's real directory, whatever name the include reached it by, so that a file
  // means one thing however it is reached and in whatever order (docs/policy.md rule 1).
  policy.dir = from === undefined ? policyDir(file) : dirname(real);
  expandEntries(policy, ctx, out.errors);
  (parsed.policy ? out.files : out.salvaged).push(policy);

  walk.stack.push({ id, real });
  for (const inc of policy.include) {
    const expanded = expandPath(inc.pattern, policy.dir, ctx);
    if (!expanded.ok) {
      out.errors.push(err(inc.pos, `include: ${expanded.message}`));
      continue;
    }
    out.includePatterns.push(expanded.path);
    if (isGlob(expanded.path)) {
      const look = await lookAtGlob(walk.globFs, expanded.path);
      out.globbed.push(look);
      if (look.literal) await loadFile(walk, expanded.path, inc.pos, false);
      // Unlike a directory not made yet, a loop is a mistake: it loads nothing, silently else.
      if (look.baseLoop) {
        out.warnings.push(
          err(
            inc.pos,
            `include: ${look.base} leads through a symlink loop (ELOOP); nothing it holds is ` +
              'loaded until the link that leads back to itself is fixed',
          ),
        );
      }
      for (const link of look.outsideBase) {
        out.warnings.push(
          err(
            inc.pos,
            `include: ${link} is a link out of ${look.base}; an include glob loads only files ` +
              'inside its directory, so it is not loaded (name its target in include: to load it)',
          ),
        );
      }
      const paths = look.matches;
      if (walk.reads + paths.length > MAX_POLICY_FILES) {
        // Past the cap with what is read already: nothing of it is read.
        out.errors.push(err(inc.pos, tooManyFilesMessage(walk.reads + paths.length)));
        walk.capped = true;
      }
      for (const p of paths) await loadFile(walk, p, inc.pos, false);
    } else {
      await loadFile(walk, expanded.path, inc.pos, false);
    }
    if (walk.capped) break;
  }
  walk.stack.pop();
}

/** The error for an include, or the grants file, that is one of the daemon's own files. */
function ownStateError(file: string, from: Pos | undefined, own: OwnState): PolicyError {
  const what = ownStateMessage(file, own.dir);
  return from ? err(from, `include: ${what}`) : { file, line: 1, column: 1, message: what };
}

/**
 * What an include pattern with glob characters stands for now (`GlobLook`): a file or link of
 * that very name if there is one (even a dangling link: the include then names a missing file),
 * else the files the glob matches, in the order they load (by their names' bytes). The daemon's
 * watcher looks the same way to tell whether a load would find something else now
 * (daemon/watch-policy.ts `globMoved`).
 */
export async function lookAtGlob(fs: FsView, pattern: string): Promise<GlobLook> {
  const base = splitGlob(pattern).base;
  let baseLoop = false;
  const baseReal = await fs.realpath(base).catch((e: unknown) => {
    baseLoop = errnoCode(e) === 'ELOOP';
    return undefined;
  });
  const literal = await fs.lstat(pattern).then(
    () => true,
    () => false,
  );
  if (literal) return { pattern, literal, base, baseReal, baseLoop, matches: [], outsideBase: [] };
  const globbed = await expandGlob(fs, pattern, 'file');
  const matches = globbed.matches
    .map((m) => m.path)
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const outsideBase = globbed.outsideBase.sort();
  return { pattern, literal, base, baseReal, baseLoop, matches, outsideBase };
}

/** Whether two looks at one include glob found the same (`GlobLook`). */
export function sameGlobLook(a: GlobLook, b: GlobLook): boolean {
  const same = (x: readonly string[], y: readonly string[]) =>
    x.length === y.length && x.every((v, i) => v === y[i]);
  return (
    a.pattern === b.pattern &&
    a.literal === b.literal &&
    a.baseReal === b.baseReal &&
    a.baseLoop === b.baseLoop &&
    same(a.matches, b.matches) &&
    same(a.outsideBase, b.outsideBase)
  );
}

/** Expand every root and deny path of a file in place, recording expansion errors. */
function expandEntries(policy: ParsedPolicyFile, ctx: PolicyContext, errors: PolicyError[]): void {
  const dir = policy.dir ?? policyDir(policy.file);
  const denies = [...policy.deny, ...policy.servers.flatMap((s) => s.deny)];
  for (const d of denies) {
    if (d.path.startsWith('**/')) {
      d.abs = d.path;
      continue;
    }
    const r = expandPath(d.path, dir, ctx);
    if (r.ok) d.abs = r.path;
    else errors.push(err(d.pos, r.message));
  }
  for (const block of policy.servers) {
    for (const root of block.roots) {
      const r = expandPath(root.path, dir, ctx);
      if (r.ok) root.abs = r.path;
      else errors.push(err(root.pathPos, r.message));
    }
  }
}
