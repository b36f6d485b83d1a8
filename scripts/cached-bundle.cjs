// A test process's copy of tap or yaml: one CommonJS bundle, compiled with a V8 code cache.
// Copied to dist/node_modules/cached-bundle.cjs by scripts/bundle-test-deps.mjs, whose small
// generated entries (dist/node_modules/tap/cached.cjs, yaml/cached.cjs) call it.
//
// Every test file is a Node process of its own, and compiling tap (570 KB) and yaml (160 KB, 73
// files in its package) was most of what loading them cost: Node 20 keeps no code cache for ES
// modules, nor (before 22.1) for CommonJS. So each is compiled here as a vm.Script with the code
// cache the first test process to load it left in the checkout's .tmp/test-code-cache/. That
// cache is made when that process exits, so that it holds what the test compiled lazily too, and
// is written whole or not at all (a temporary file renamed). It is keyed by the bundle's name and
// hash, Node's version and the CPU's architecture, and sealed with a checksum: V8 checks a cache's
// version, flags and lengths but not its bytes (a flipped byte aborts the process), so one whose
// checksum does not match is not used; neither is one V8 rejects. Either is written again.
'use strict';
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { dirname, join } = require('node:path');
const { Script } = require('node:vm');

const cacheDir = join(__dirname, '..', '..', '.tmp', 'test-code-cache');

/** A 32-bit checksum of `bytes` (FNV-1a over bytes): cheap next to compiling, unlike a digest. */
function checksum(bytes) {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h >>> 0;
}

/** The code cache in `file` (after its 4-byte checksum), if there is one and it is whole. */
function readCache(file) {
  try {
    const bytes = readFileSync(file);
    const data = bytes.subarray(4);
    return bytes.length > 4 && bytes.readUInt32LE(0) === checksum(data) ? data : undefined;
  } catch {
    return undefined; // none yet: this process makes it
  }
}

function writeCache(file, data) {
  try {
    mkdirSync(cacheDir, { recursive: true });
    const seal = Buffer.alloc(4);
    seal.writeUInt32LE(checksum(data));
    const temporary = `${file}.${process.pid}`;
    writeFileSync(temporary, Buffer.concat([seal, data]));
    renameSync(temporary, file);
  } catch {
    // only a speed-up: the next test process tries again
  }
}

/** The exports of the CommonJS bundle `bundle`, whose name and hash are `key`. */
exports.load = function load(bundle, key) {
  const cacheFile = join(cacheDir, `${key}-${process.version}-${process.arch}`);
  const cachedData = readCache(cacheFile);
  // The wrapper on a line of its own (lineOffset -1), so that the bundle's lines and columns in a
  // stack trace are the file's own.
  const script = new Script(
    `(function (exports, require, module, __filename, __dirname) {\n${readFileSync(bundle, 'utf8')}\n})`,
    { filename: bundle, lineOffset: -1, cachedData },
  );
  if (cachedData === undefined || script.cachedDataRejected) {
    process.once('exit', () => writeCache(cacheFile, script.createCachedData()));
  }
  const module = { exports: {} };
  const wrapper = script.runInThisContext();
  wrapper(module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  return module.exports;
};
