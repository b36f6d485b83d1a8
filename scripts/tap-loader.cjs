// What `import t from 'tap'` loads in a test process (copied to dist/node_modules/tap/index.cjs by
// scripts/bundle-tap.mjs): tap's bundle, compiled with a V8 code cache.
//
// Every test file is a Node process of its own, and V8 compiling tap's 570 KB bundle was most of
// the 0.37 s of CPU each one spent loading tap. Node 20 keeps no code cache for ES modules (nor,
// before 22.1, for CommonJS), so the bundle is CommonJS, compiled here as a vm.Script with the
// code cache the first test process to load it left in the checkout's .tmp/tap-code-cache/. That
// cache is made when that process exits, so that it holds what the test compiled lazily too, and
// is written whole or not at all (a temporary file renamed). It is keyed by the bundle's hash,
// Node's version and the CPU's architecture; one V8 rejects (other flags) is compiled without and
// written again. The bundle's exports are those of tap's ES module entry; a test imports its
// default, `t` (a named value import would not link: nothing in the suite uses one).
'use strict';
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { join } = require('node:path');
const { Script } = require('node:vm');

const dir = join(__dirname, '..', '@tapjs', 'bundled-tap');
const bundle = join(dir, 'index.cjs');
const { bundleHash } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
const cacheDir = join(__dirname, '..', '..', '..', '.tmp', 'tap-code-cache');
const cacheFile = join(cacheDir, `${bundleHash}-${process.version}-${process.arch}`);

let cachedData;
try {
  cachedData = readFileSync(cacheFile);
} catch {
  // none yet: this process makes it
}
// The wrapper on a line of its own (lineOffset -1), so that the bundle's lines and columns in a
// stack trace are the file's own.
const script = new Script(
  `(function (exports, require, module, __filename, __dirname) {\n${readFileSync(bundle, 'utf8')}\n})`,
  { filename: bundle, lineOffset: -1, cachedData },
);
if (cachedData === undefined || script.cachedDataRejected) {
  process.once('exit', () => {
    try {
      mkdirSync(cacheDir, { recursive: true });
      const temporary = `${cacheFile}.${process.pid}`;
      writeFileSync(temporary, script.createCachedData());
      renameSync(temporary, cacheFile);
    } catch {
      // only a speed-up: the next test process tries again
    }
  });
}
const tapModule = { exports: {} };
script.runInThisContext()(tapModule.exports, createRequire(bundle), tapModule, bundle, dir);
module.exports = tapModule.exports.default;
