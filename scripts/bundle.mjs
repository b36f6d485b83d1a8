// Build step, after tsc: bundle the daemon (`dist/daemon/mcp-rootsd.cjs`, with
// `dist/daemon/main.js` a link to it) and the proxy the same way, and build rootsctl's executable (`dist/cli/rootsctl.cjs`, with `dist/cli/main.js` a link to it) and the
// CommonJS bundles it runs through V8's code cache: see the end of this file.
//
// Why: a start-up spent most of its time and much of its memory loading modules, not running
// them. `rootsctl validate` loaded about 60 of the project's ES modules and the 72 CommonJS files
// of `yaml`; each costs Node's loader a resolution, a read and a compile, and the loader's own
// functions ran hot enough to be optimised, which maps several MB more of the node binary into an
// idle daemon. One file per entry (rootsctl's lazily loaded commands in bundles of their own) does
// the same work with a handful of files. bench/FINDINGS.md has the figures.
//
// Only the entry files are replaced: every other file in dist/ stays tsc's own, so that code
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
import { readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../', import.meta.url));

/**
 * The lines for sh that the three bins begin with, in place of `#!/usr/bin/env node`: started as
 * a program (npm's link, a host's command), Node starts without NODE_EXTRA_CA_CERTS, which Node
 * 20 parses at every start and no program of this package has a use for, and
 * the program puts it back for its children (common/launcher.ts and common/extra-ca-certs.ts say
 * why and how; tsc has compiled them by now). In the bin itself, not a launcher of its own, so
 * that sh need not find the file behind npm's link (`readlink` measured about 5 ms more:
 * bench/FINDINGS.md) and `node` on the bin still runs it.
 */
const { launcher } = await import(pathToFileURL(`${root}dist/common/launcher.js`).href);

/**
 * One program as one CommonJS bundle `dist/<dir>/<bin>` (made executable), with `dist/<dir>/main.js`
 * a link to it. The modules that find files beside themselves get the bundle's URL for
 * `import.meta.url`. `head`: what the file begins with (the launcher's lines, or none: the entry's
 * own `#!/usr/bin/env node`). `extra`: further esbuild options (an alias).
 */
async function commonJsBin(dir, entry, bin, head, extra = {}) {
  const outdir = `${root}dist/${dir}`;
  const { outputFiles } = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile: `${outdir}/${bin}`,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    external: ['@parcel/watcher'],
    define: { 'import.meta.url': '__bundleUrl' },
    banner: {
      js: `${head}'use strict'; const __bundleUrl = require('node:url').pathToFileURL(__filename).href;`,
    },
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    write: false,
    ...extra,
  });
  for (const out of outputFiles) {
    const js = out.path.endsWith('.cjs');
    writeFileSync(out.path, js ? asciiOnly(out.text) : out.contents, js ? { mode: 0o755 } : {});
  }
  // What an earlier build left under the link's name: tsc's module or an ES module bundle's map.
  rmSync(`${outdir}/main.js`, { force: true });
  rmSync(`${outdir}/main.js.map`, { force: true });
  symlinkSync(bin, `${outdir}/main.js`);
}

/**
 * The daemon: one CommonJS bundle of `daemon/bin.ts`, `dist/daemon/mcp-rootsd.cjs` (the bin, and
 * the file `rootsctl install-service` names in its unit), and `dist/daemon/main.js` (the name the
 * README and hints give in a clone) a link to it. The tests start the daemon hundreds of times:
 * from an ES module bundle a start to its socket cost about 330 M instructions (376 M with the
 * demo policy), from this CommonJS one 322 M (366 M), as Node's ES module loader is never loaded.
 * @parcel/watcher stays outside (a native module, loaded only for large `**` trees). The modules that find files beside
 * themselves (the package's version, `lazy-crypto`'s `createRequire`) get the bundle's URL. It
 * begins with the launcher's lines too: not for its start, once a login, but for its memory, as
 * the certificates Node 20 parses at start stay resident for the daemon's whole life.
 */
// The ES module bundle's chunks, from a build before this one.
rmSync(`${root}dist/daemon/chunks`, { recursive: true, force: true });
await commonJsBin('daemon', 'daemon/bin.ts', 'mcp-rootsd.cjs', launcher('mcp-rootsd'), {
  alias: { yaml: './node_modules/yaml/browser/index.js' },
});

/**
 * The proxy: one CommonJS bundle of `proxy/bin.ts`, `dist/proxy/mcp-roots-proxy.cjs` (the bin),
 * and `dist/proxy/main.js` (the name hosts' configurations and the README give) a link to it.
 * A host starts the proxy for every session, and the tests start it hundreds of times: from ES
 * modules one by one a handshake cost about 390 M instructions; from an ES module bundle 250 M,
 * from this CommonJS one 230 M (no ES module loader: Node resolves a main file's links before it
 * picks the loader, except under `--preserve-symlinks-main`). The proxy loads nothing lazily, so
 * one file holds it all. The library (`dist/index.js`) keeps tsc's modules. It begins with the
 * launcher's lines: a host starts it for every session.
 */
await commonJsBin('proxy', 'proxy/bin.ts', 'mcp-roots-proxy.cjs', launcher('mcp-roots-proxy'));

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
 * rootsctl: CommonJS bundles of `cli/start.ts`, run by a small `rootsctl.cjs` (`cli/cached-main.ts`)
 * through `vm.Script` with V8's code cache (cli/code-cache.ts says why and where the cache lives).
 * One bundle holding every command, and one per module of `cli/commands/` (`daemon`, `grants`,
 * `log`, ...) that needs under half of it, holding that module's commands and none of the others'
 * (their dynamic imports in `cli/commands/table.ts` become a stub that is never reached). Why:
 * what a command's bundle holds and does not run still costs its start a read and V8's set-up of
 * the bundle's top level (bench/FINDINGS.md has the figures). `rootsctl.cjs` answers
 * `--version` and `--help` itself and picks the bundle by the command (cli/command-word.ts).
 * Each bundle's name carries a hash of its contents, so that a cache is never used with another
 * build's code even when the two have the same length (V8 checks only the length).
 */
{
  const outdir = `${root}dist/cli`;
  rmSync(`${outdir}/chunks`, { recursive: true, force: true });
  for (const old of readdirSync(outdir)) {
    if (/^rootsctl-[0-9a-f]+\.cjs(\.map)?$/.test(old)) rmSync(`${outdir}/${old}`);
  }
  const groups = commandModules();
  /** Bundle `cli/start.ts` (with only `group`'s commands when given); returns the file's name. */
  const bundleStart = async (group) => {
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
      plugins: group === undefined ? [] : [onlyCommandsOf(group)],
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
    return name;
  };
  const whole = await bundleStart(undefined);
  const bundles = { '': whole };
  for (const group of new Set(groups.values())) {
    let name = await bundleStart(group);
    // A group that needs most of the code (the engine and the YAML parser: validate, list, edit,
    // doctor, ...) measured no faster from its own bundle (bench/FINDINGS.md): it runs from the
    // whole one, and the package carries one copy of the engine, not six.
    if (statSync(`${outdir}/${name}`).size > statSync(`${outdir}/${whole}`).size / 2) {
      rmSync(`${outdir}/${name}`);
      rmSync(`${outdir}/${name}.map`);
      name = whole;
    }
    for (const [command, g] of groups) if (g === group) bundles[command] = name;
  }
  // The executable itself, CommonJS too: Node starts a `.cjs` main file without its ES module
  // loader, which measured 10-20 M instructions of every command (bench/FINDINGS.md). A `.js`
  // file of this `"type": "module"` package is always an ES module, so the bin names `rootsctl.cjs`
  // and `main.js` (the README's `node dist/cli/main.js`) is a link to it: Node resolves a main
  // file's links before it picks the loader (not under `--preserve-symlinks-main`).
  // It begins with the launcher's lines, as the proxy's bin does.
  const { outputFiles } = await build({
    absWorkingDir: root,
    entryPoints: ['cli/cached-main.ts'],
    outfile: `${outdir}/rootsctl.cjs`,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    define: { ROOTSCTL_BUNDLES: JSON.stringify(bundles), 'import.meta.url': '__mainUrl' },
    banner: {
      js: `${launcher('rootsctl')}'use strict'; const __mainUrl = require('node:url').pathToFileURL(__filename).href;`,
    },
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    write: false,
  });
  writeFileSync(`${outdir}/rootsctl.cjs`, asciiOnly(outputFiles[0].text), { mode: 0o755 });
  rmSync(`${outdir}/main.js`, { force: true });
  symlinkSync('rootsctl.cjs', `${outdir}/main.js`);
}

/**
 * Which module of `cli/commands/` holds each command, read from `cli/commands/table.ts`'s
 * `HANDLERS` (`status: async () => (await import('./daemon.js')).status,`). The build fails when
 * a command of `SPECS` has no such line, rather than leave it to the bundle holding every command.
 */
function commandModules() {
  const table = readFileSync(`${root}cli/commands/table.ts`, 'utf8');
  const groups = new Map();
  const line = /^ {2}'?([a-z-]+)'?: async \(\) => \(await import\('\.\/([a-z-]+)\.js'\)\)\.\w+,$/gm;
  for (const [, command, module] of table.matchAll(line)) groups.set(command, module);
  const specs = readFileSync(`${root}cli/commands/spec.ts`, 'utf8');
  const section = specs.slice(specs.indexOf('export const SPECS = {'));
  for (const [, command] of section.matchAll(/^ {2}'?([a-z-]+)'?: \{/gm)) {
    if (!groups.has(command)) {
      throw new Error(
        `scripts/bundle.mjs: no handler line for "${command}" in cli/commands/table.ts`,
      );
    }
  }
  return groups;
}

/**
 * For the bundle of the commands in `cli/commands/<group>.ts`: the table's dynamic imports of the
 * other command modules resolve to a module that only throws. `main.js` loads this bundle only
 * for a command line whose command is one of `group`'s, so it is never reached.
 */
function onlyCommandsOf(group) {
  return {
    name: 'rootsctl-only-commands-of',
    setup(b) {
      b.onResolve({ filter: /^\.\/[a-z-]+\.js$/ }, (args) => {
        if (args.kind !== 'dynamic-import') return undefined;
        if (!args.importer.endsWith(join('cli', 'commands', 'table.ts'))) return undefined;
        const module = args.path.slice(2, -3);
        return module === group ? undefined : { path: module, namespace: 'rootsctl-elsewhere' };
      });
      b.onLoad({ filter: /.*/, namespace: 'rootsctl-elsewhere' }, (args) => ({
        contents: `throw new Error(${JSON.stringify(`rootsctl: this bundle does not hold cli/commands/${args.path}.ts`)});`,
        loader: 'js',
      }));
    },
  };
}
