// What `import t from 'tap'` loads in a test process (copied to dist/node_modules/tap/index.cjs by
// scripts/bundle-tap.mjs): tap's bundle, compiled with a V8 code cache.
//
// Every test file is a Node process of its own, and V8 compiling tap's 570 KB bundle was most of
// the 0.37 s of CPU each one spent loading tap. Node 20 keeps no code cache for ES modules (nor,
// before 22.1, for CommonJS), so the bundle is CommonJS, compiled here as a vm.Script with the
// code cache the first test process to load it left in the checkout's .tmp/tap-code-cache/. That
// cache is made when that process exits, so that it holds what the test compiled lazily too, and
// is written whole or not at all (a temporary file renamed). It is keyed by the bundle's hash,
// Node's version and the CPU's architecture, and sealed with a checksum: V8 checks a cache's
// version, flags and lengths but not its bytes (a damaged one can abort the process), so one whose
// checksum does not match is not used; neither is one V8 rejects. Either is written again. The bundle's exports are those of tap's ES module entry; a test imports its
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

/** A 32-bit checksum of `bytes` (FNV-1a over bytes): cheap next to compiling, unlike a digest. */
function checksum(bytes) {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h >>> 0;
}

/** The cache file's code cache (after its 4-byte checksum), if it has one and it is whole. */
function readCache() {
  try {
    const file = readFileSync(cacheFile);
    const data = file.subarray(4);
    return file.length > 4 && file.readUInt32LE(0) === checksum(data) ? data : undefined;
  } catch {
    return undefined; // none yet: this process makes it
  }
}

const cachedData = readCache();
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
      const data = script.createCachedData();
      const seal = Buffer.alloc(4);
      seal.writeUInt32LE(checksum(data));
      writeFileSync(temporary, Buffer.concat([seal, data]));
      renameSync(temporary, cacheFile);
    } catch {
      // only a speed-up: the next test process tries again
    }
  });
}
const tapModule = { exports: {} };
script.runInThisContext()(tapModule.exports, createRequire(bundle), tapModule, bundle, dir);
module.exports = tapModule.exports.default;
