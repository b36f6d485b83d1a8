// Build step of the tests, after tsc: tap as one file, where the compiled tests find it first.
//
// Every test file is a Node process of its own (scripts/run-tests.mjs), and each one imported tap
// as some 270 ES modules (@tapjs/*, yaml, diff, tcompare, …): about 0.45 s of CPU per file on
// Node 20, whose loader pays a resolution, a read and a compile per module, 60 s of CPU over the
// suite. The same code bundled into one file loads in about 0.25 s.
//
// Node resolves `tap` from dist/test/x/y.test.js by walking up: dist/test/x/node_modules, …,
// dist/node_modules, then the checkout's node_modules. The bundle is written to
// dist/node_modules/@tapjs/bundled-tap/ (under @tapjs/, so that tap's stack filter leaves its
// frames out of failure reports, as it does for tap's own packages) and dist/node_modules/tap/
// re-exports it; nothing else in dist/ imports tap. @tapjs/mock stays outside the bundle: the two
// files that mock modules load its hooks from node_modules (`--import`), and hooks and plugin must
// be one instance. The types are still tap's own (tsc reads node_modules/tap).
//
// Compiling that bundle was still most of what loading it cost (Node 20 keeps no code cache for
// ES modules), so the same sources are bundled a second time as CommonJS, index.cjs, which
// dist/node_modules/tap/index.cjs (scripts/tap-loader.cjs) compiles with a V8 code cache; `tap`
// is that one, and the ES module bundle only under `--conditions=tap-esm` (the files that mock
// modules, and `npx tap`). Its hash, in bundled-tap/package.json, keys the cache.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../', import.meta.url));
const out = `${root}dist/node_modules`;
const options = {
  absWorkingDir: root,
  entryPoints: ['node_modules/tap/dist/esm/index.js'],
  bundle: true,
  platform: 'node',
  target: 'node20',
  // Whitespace and syntax minified (names kept, so tap's own stack traces still name its
  // functions): 547 KB instead of 847 KB, about 3% fewer instructions per test process.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
};

rmSync(out, { recursive: true, force: true });
await Promise.all([
  build({
    ...options,
    outfile: `${out}/@tapjs/bundled-tap/index.js`,
    format: 'esm',
    external: ['@tapjs/mock'],
    // Some of tap's CommonJS dependencies call require() for Node's own modules.
    banner: {
      js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
    },
  }),
  // The same ES module sources as CommonJS, for scripts/tap-loader.cjs (@tapjs/mock inside: no
  // file that loads this one mocks modules).
  build({
    ...options,
    outfile: `${out}/@tapjs/bundled-tap/index.cjs`,
    format: 'cjs',
    define: { 'import.meta.url': '__bundleUrl' },
    banner: { js: "const __bundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  }),
]);
const bundleHash = createHash('sha256')
  .update(readFileSync(`${out}/@tapjs/bundled-tap/index.cjs`))
  .digest('hex')
  .slice(0, 16);
writeFileSync(
  `${out}/@tapjs/bundled-tap/package.json`,
  `${JSON.stringify({ name: '@tapjs/bundled-tap', private: true, type: 'module', bundleHash })}\n`,
);
mkdirSync(`${out}/tap`, { recursive: true });
// `tap` is the CommonJS bundle through its loader; with `--conditions=tap-esm` (the files that mock
// modules, scripts/run-tests.mjs) the ES module bundle.
writeFileSync(
  `${out}/tap/package.json`,
  `${JSON.stringify({ name: 'tap', private: true, type: 'module', exports: { 'tap-esm': './index.js', default: './index.cjs' } })}\n`,
);
writeFileSync(
  `${out}/tap/index.js`,
  "export * from '../@tapjs/bundled-tap/index.js';\nexport { default } from '../@tapjs/bundled-tap/index.js';\n",
);
copyFileSync(`${root}scripts/tap-loader.cjs`, `${out}/tap/index.cjs`);
