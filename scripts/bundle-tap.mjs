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
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../', import.meta.url));
const out = `${root}dist/node_modules`;

rmSync(out, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: ['node_modules/tap/dist/esm/index.js'],
  outfile: `${out}/@tapjs/bundled-tap/index.js`,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['@tapjs/mock'],
  // Whitespace and syntax minified (names kept, so tap's own stack traces still name its
  // functions): 547 KB instead of 847 KB, about 3% fewer instructions per test process.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  // Some of tap's CommonJS dependencies call require() for Node's own modules.
  banner: {
    js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
writeFileSync(
  `${out}/@tapjs/bundled-tap/package.json`,
  `${JSON.stringify({ name: '@tapjs/bundled-tap', private: true, type: 'module' })}\n`,
);
mkdirSync(`${out}/tap`, { recursive: true });
writeFileSync(
  `${out}/tap/package.json`,
  `${JSON.stringify({ name: 'tap', private: true, type: 'module', exports: './index.js' })}\n`,
);
writeFileSync(
  `${out}/tap/index.js`,
  "export * from '../@tapjs/bundled-tap/index.js';\nexport { default } from '../@tapjs/bundled-tap/index.js';\n",
);
