/**
 * `node:crypto`, loaded on first use. Only the daemon hashes or draws random bytes in the socket
 * code that every client also imports, and loading the module is a measurable part of a
 * rootsctl start (bench/cli-startup.ts).
 */
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);
let cached: typeof import('node:crypto') | undefined;

export function crypto(): typeof import('node:crypto') {
  cached ??= load('node:crypto') as typeof import('node:crypto');
  return cached;
}
