#!/usr/bin/env node
/**
 * The `rootsctl` executable, as tsc builds it. The build (scripts/bundle.mjs) replaces the built
 * file with `cached-main.ts`, which runs the same `start` from one bundle with V8's code cache.
 */
import { start } from './start.js';

process.exitCode = await start();
