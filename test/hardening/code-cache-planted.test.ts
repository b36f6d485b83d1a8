/**
 * A planted code cache runs the planter's code: V8 checks a cache's version, flags and the
 * source's length, never the source's bytes, so a cache compiled from other code of the same
 * length runs that code (cli/cache-trust.ts). Each row plants such a cache (code that answers
 * PLANTED where the bundle answers BUNDLE) where rootsctl looks for its cache, in one layout
 * another user or a corrupted file could produce, and asks which code ran. The control rows
 * plant it where only the user can write: there it must run, which shows the planting works.
 */
import {
  chmodSync,
  chownSync,
  lchownSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
import t from 'tap';
import { seal } from '../../cli/cache-trust.js';
import { runCached, type Wrapper } from '../../cli/code-cache.js';
import { createUser } from '../helpers/users.js';

/** `require` for the wrapper: the bundles here need nothing from it. */
const noRequire = ((id: string) => {
  throw new Error(`the test bundle asked for ${id}`);
}) as unknown as NodeJS.Require;

const BUILD = 'rootsctl-00000000feedbeef';
const NAME = `${BUILD}-${process.version}-${process.arch}-validate.v8`;

/** Two sources of one length, unique per row (V8 keeps compiled sources in memory per process). */
function sources(row: number): { bundle: Buffer; planted: Buffer } {
  const body = (answer: string) =>
    `/* row ${String(row).padStart(3, '0')} */ module.exports.who = function () { return '${answer}'; };`;
  return { bundle: Buffer.from(body('BUNDLE!')), planted: Buffer.from(body('PLANTED')) };
}

/** The code cache of `source` as runCached compiles it, with `who` compiled into it. */
function compiledCache(file: string, source: Buffer): Buffer {
  const script = new Script(
    `(function (exports, require, module, __filename, __bundleUrl) {${source.toString()}\n})`,
    { filename: file },
  );
  const module = { exports: {} as { who?: () => string } };
  (script.runInThisContext() as Wrapper)(module.exports, noRequire, module, file, '');
  module.exports.who!();
  return script.createCachedData();
}

/** Which code runs when rootsctl's loader runs `file` with `XDG_CACHE_HOME=xdg`. */
function whoRuns(file: string, xdg: string): string {
  const before = process.env.XDG_CACHE_HOME;
  process.env.XDG_CACHE_HOME = xdg;
  try {
    const { value } = runCached(file, 'validate', (fn) => {
      const module = { exports: {} as { who?: () => string } };
      fn(module.exports, noRequire, module, file, '');
      return module.exports;
    });
    return value.who!();
  } finally {
    if (before === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = before;
  }
}

interface Layout {
  /** `XDG_CACHE_HOME` for the run. */
  xdg: string;
  /** The cache directory the planted file goes into (made 0700 if missing). */
  cacheDir: string;
}

interface Row {
  what: string;
  /** Where to plant: `base` is a fresh root-owned 0755 directory; `other` another user's uid. */
  layout: (base: string, other: number) => Layout;
  /** What to plant, from the planted code's cache and the bundle's bytes (default: sealed). */
  cache?: (planted: Buffer, bundle: Buffer, plantedSource: Buffer) => Buffer;
  /** After planting: spoil something. */
  spoil?: (l: Layout, other: number) => void;
  /** Whether the planted code may run (only where no one else could have planted it). */
  runs: boolean;
}

const plain = (base: string): Layout => ({
  xdg: join(base, 'xdg'),
  cacheDir: join(base, 'xdg', 'mcp-roots'),
});

const ROWS: Row[] = [
  // controls: the user's own closed directory, however reached
  { what: 'the user own closed directory', layout: plain, runs: true },
  {
    what: 'below a sticky world-writable directory (like /tmp)',
    layout: (base) => {
      mkdirSync(join(base, 'tmp'), { mode: 0o1777 });
      chmodSync(join(base, 'tmp'), 0o1777);
      return { xdg: join(base, 'tmp', 'xdg'), cacheDir: join(base, 'tmp', 'xdg', 'mcp-roots') };
    },
    runs: true,
  },
  {
    what: 'through a link of the user own',
    layout: (base) => {
      mkdirSync(join(base, 'real'));
      symlinkSync(join(base, 'real'), join(base, 'link'));
      return { xdg: join(base, 'link'), cacheDir: join(base, 'real', 'mcp-roots') };
    },
    runs: true,
  },
  // the cache directory itself
  {
    what: 'the cache directory is another user own',
    layout: plain,
    spoil: (l, other) => chownSync(l.cacheDir, other, other),
    runs: false,
  },
  {
    what: 'the cache directory is open to the group',
    layout: plain,
    spoil: (l) => chmodSync(l.cacheDir, 0o750),
    runs: false,
  },
  {
    what: 'the cache directory is a link to a closed directory',
    layout: (base) => {
      mkdirSync(join(base, 'xdg'));
      symlinkSync(join(base, 'elsewhere'), join(base, 'xdg', 'mcp-roots'));
      return { xdg: join(base, 'xdg'), cacheDir: join(base, 'elsewhere') };
    },
    runs: false,
  },
  // the directories above it
  {
    what: 'XDG_CACHE_HOME is another user directory',
    layout: plain,
    spoil: (l, other) => chownSync(l.xdg, other, other),
    runs: false,
  },
  {
    what: 'XDG_CACHE_HOME is writable by everyone, not sticky',
    layout: plain,
    spoil: (l) => chmodSync(l.xdg, 0o777),
    runs: false,
  },
  {
    what: 'XDG_CACHE_HOME is writable by the group',
    layout: plain,
    spoil: (l) => chmodSync(l.xdg, 0o775),
    runs: false,
  },
  {
    what: 'a directory further up is another user own',
    layout: (base) => ({
      xdg: join(base, 'shared', 'xdg'),
      cacheDir: join(base, 'shared', 'xdg', 'mcp-roots'),
    }),
    // base/shared: its owner may rename xdg away and put theirs in its place.
    spoil: (l, other) => chownSync(join(l.xdg, '..'), other, other),
    runs: false,
  },
  {
    what: 'XDG_CACHE_HOME is a link another user owns (and may repoint)',
    layout: (base) => {
      mkdirSync(join(base, 'real'));
      symlinkSync(join(base, 'real'), join(base, 'link'));
      return { xdg: join(base, 'link'), cacheDir: join(base, 'real', 'mcp-roots') };
    },
    spoil: (l, other) => lchownSync(l.xdg, other, other),
    runs: false,
  },
  {
    what: 'a link on the way leads into another user directory',
    layout: (base) => {
      mkdirSync(join(base, 'theirs'));
      symlinkSync(join(base, 'theirs'), join(base, 'link'));
      return { xdg: join(base, 'link', 'xdg'), cacheDir: join(base, 'theirs', 'xdg', 'mcp-roots') };
    },
    spoil: (l, other) => chownSync(join(l.cacheDir, '..', '..'), other, other),
    runs: false,
  },
  // the file
  {
    what: 'the cache file is another user own',
    layout: plain,
    spoil: (l, other) => chownSync(join(l.cacheDir, NAME), other, other),
    runs: false,
  },
  {
    what: 'the cache file is writable by the group',
    layout: plain,
    spoil: (l) => chmodSync(join(l.cacheDir, NAME), 0o620),
    runs: false,
  },
  {
    what: 'the cache file is a link to a good cache',
    layout: plain,
    spoil: (l) => {
      const file = join(l.cacheDir, NAME);
      renameSync(file, join(l.cacheDir, 'real.v8'));
      symlinkSync('real.v8', file);
    },
    runs: false,
  },
  // what the file holds
  {
    what: 'V8 data without the seal (what an older rootsctl wrote)',
    layout: plain,
    cache: (planted) => planted,
    runs: false,
  },
  {
    what: 'sealed for the source it was compiled from, not the bundle',
    layout: plain,
    cache: (planted, _bundle, plantedSource) => seal(plantedSource, planted),
    runs: false,
  },
];

void t.test('a planted code cache runs only where no one but the user could plant it', (t) => {
  const other = createUser(t);
  const root = mkdtempSync(join(tmpdir(), 'mr-cc-'));
  chmodSync(root, 0o755);
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  let i = 0;
  for (const row of ROWS) {
    const base = join(root, String(i));
    mkdirSync(base, { mode: 0o755 });
    const { bundle, planted } = sources(i++);
    const file = join(base, `${BUILD}.cjs`);
    writeFileSync(file, bundle);
    const layout = row.layout(base, other.uid);
    mkdirSync(layout.cacheDir, { recursive: true, mode: 0o700 });
    const data = compiledCache(file, planted);
    const cache = row.cache ? row.cache(data, bundle, planted) : seal(bundle, data);
    writeFileSync(join(layout.cacheDir, NAME), cache, { mode: 0o600 });
    row.spoil?.(layout, other.uid);
    const who = whoRuns(file, layout.xdg);
    t.equal(who, row.runs ? 'PLANTED' : 'BUNDLE!', `${row.what}: ${who} ran`);
  }
  t.end();
});

void t.test(
  'the bundle changed in place, to the same length: the old cache is not its code',
  (t) => {
    const root = mkdtempSync(join(tmpdir(), 'mr-cc-'));
    t.teardown(() => rmSync(root, { recursive: true, force: true }));
    const { bundle, planted } = sources(900);
    const file = join(root, `${BUILD}.cjs`);
    const xdg = join(root, 'xdg');
    // The first run writes the cache of what the file held then.
    writeFileSync(file, planted);
    const first = runCachedOnce(file, xdg);
    t.equal(first, 'PLANTED');
    writeFileSync(file, bundle);
    t.equal(whoRuns(file, xdg), 'BUNDLE!', 'the edited bundle runs, not the cache of the old one');
    t.end();
  },
);

/** A run that saves its cache, as the built rootsctl does after the command. */
function runCachedOnce(file: string, xdg: string): string {
  const before = process.env.XDG_CACHE_HOME;
  process.env.XDG_CACHE_HOME = xdg;
  try {
    const r = runCached(file, 'validate', (fn) => {
      const module = { exports: {} as { who?: () => string } };
      fn(module.exports, noRequire, module, file, '');
      return module.exports;
    });
    const who = r.value.who!();
    r.save();
    return who;
  } finally {
    if (before === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = before;
  }
}
