// Build step, after tsc: replace the built `rootsctl` and `mcp-rootsd` entry points with bundles.
// (rootsctl's is a CommonJS bundle run through V8's code cache: see the end of this file.)
//
// Why: a start-up spent most of its time and much of its memory loading modules, not running
// them. `rootsctl validate` loaded about 60 of the project's ES modules and the 72 CommonJS files
// of `yaml`; each costs Node's loader a resolution, a read and a compile, and the loader's own
// functions ran hot enough to be optimised, which maps several MB more of the node binary into an
// idle daemon. One file per entry (shared code and lazily loaded commands in `chunks/`) does the
// same work with a handful of files. bench/FINDINGS.md has the figures.
//
// Only the two entry files are replaced: every other file in dist/ stays tsc's own, so that code
// importing dist/ modules (the tests, the proxy) keeps one instance of each module. Nothing imports
// an entry file. @parcel/watcher stays outside (a native module, loaded only for `**` globs).
//
// What V8 still pays per start is mostly parsing what is loaded (every function is at least
// pre-parsed) and keeping its source: `rootsctl validate` and an idle daemon load about 0.6 MB.
// Two things make that less without changing the code that runs (bench/FINDINGS.md has the figures):
// - `yaml` is taken from its ES module build (the same code as its CommonJS `dist/`, from the same
//   package version), so esbuild leaves out what nothing reaches instead of wrapping 72 CommonJS
//   files whole.
// - Whitespace and syntax are minified; names are not, so a stack trace still names every function
//   (its positions point into the bundle; the `.map` beside it, in the build, maps them back).
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../', import.meta.url));

/** The built entries: source, and the directory its bundle replaces `main.js` in. */
const ENTRIES = [['daemon/main.ts', 'dist/daemon']];

for (const [entry, outdir] of ENTRIES) {
  // Chunk names carry a hash: remove the last build's, which nothing refers to any more.
  rmSync(`${root}${outdir}/chunks`, { recursive: true, force: true });
  const { outputFiles } = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outdir,
    entryNames: '[name]',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    external: ['@parcel/watcher'],
    alias: { yaml: './node_modules/yaml/browser/index.js' },
    minifyWhitespace: true,
    minifySyntax: true,
    // The CommonJS dependencies (picomatch) call require() for Node's own modules; an ES
    // module has no require, so each output file makes one.
    banner: {
      js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
    },
    logLevel: 'warning',
    write: false,
  });
  for (const out of outputFiles) {
    mkdirSync(dirname(out.path), { recursive: true });
    writeFileSync(out.path, out.path.endsWith('.js') ? asciiOnly(out.text) : out.contents);
  }
}

/**
 * esbuild writes strings and regular expressions in ASCII, but copies comments as they are. One
 * non-ASCII character anywhere makes V8 hold the whole file's source as UTF-16: twice the memory
 * (1.3 MB instead of 0.65 MB for the daemon). Outside comments there is none left to escape.
 */
function asciiOnly(text) {
  return text.replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * rootsctl: one CommonJS bundle of `cli/start.ts`, run by a small `main.js` (`cli/cached-main.ts`)
 * through `vm.Script` with V8's code cache (cli/code-cache.ts says why and where the cache lives).
 * The bundle's name carries a hash of its contents, so that a cache is never used with another
 * build's code even when the two have the same length (V8 checks only the length).
 */
{
  const outdir = `${root}dist/cli`;
  rmSync(`${outdir}/chunks`, { recursive: true, force: true });
  for (const old of readdirSync(outdir)) {
    if (/^rootsctl-[0-9a-f]+\.cjs(\.map)?$/.test(old)) rmSync(`${outdir}/${old}`);
  }
  const bundled = await build({
    absWorkingDir: root,
    entryPoints: ['cli/start.ts'],
    outfile: `${outdir}/rootsctl.cjs`,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    sourcemap: 'external',
    alias: { yaml: './node_modules/yaml/browser/index.js' },
    // The wrapper (cli/code-cache.ts) passes the bundle's own URL for the modules that find
    // files beside themselves (the package's version).
    define: { 'import.meta.url': '__bundleUrl' },
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    write: false,
  });
  const code = bundled.outputFiles.find((f) => f.path.endsWith('.cjs'));
  const map = bundled.outputFiles.find((f) => f.path.endsWith('.map'));
  const text = asciiOnly(code.text);
  const name = `rootsctl-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.cjs`;
  writeFileSync(`${outdir}/${name}`, text);
  writeFileSync(`${outdir}/${name}.map`, map.contents);
  const { outputFiles } = await build({
    absWorkingDir: root,
    entryPoints: ['cli/cached-main.ts'],
    outfile: `${outdir}/main.js`,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    define: { ROOTSCTL_BUNDLE: JSON.stringify(name) },
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    write: false,
  });
  writeFileSync(`${outdir}/main.js`, asciiOnly(outputFiles[0].text));
}
