#!/usr/bin/env node
/**
 * The built `rootsctl` executable (scripts/bundle.mjs puts it in place of tsc's `main.js`): runs
 * `start` (cli/start.ts) from one CommonJS bundle, compiled with V8's code cache when a safe cache
 * directory holds one (cli/code-cache.ts says why and where).
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { runCached } from './code-cache.js';

/** The bundle's file name, beside this file; the build writes it in (its name carries its hash). */
declare const ROOTSCTL_BUNDLE: string;

const url = new URL(`./${ROOTSCTL_BUNDLE}`, import.meta.url);
const file = fileURLToPath(url);
const exports = runCached(file, process.argv[2], (fn) => {
  const module = { exports: {} as { start?: () => Promise<number> } };
  fn(module.exports, createRequire(file), module, file, url.href);
  return module.exports;
});
process.exitCode = await exports.value.start!();
// After the command ran: the functions it compiled lazily are in the cache too.
exports.save();
