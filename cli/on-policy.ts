/** A rootsctl command about one policy file, written so that it acts on that file. */
import { configFile } from '../common/locations.js';
import { shellQuote } from '../common/shell-quote.js';
import type { Io } from './io.js';

/**
 * `command` as it acts on `file`: with `--config FILE` unless `file` is the policy rootsctl
 * uses anyway. A hint after `rootsctl --config new.yaml init` must check `new.yaml`, not
 * `~/.config/mcp-roots.yaml`.
 */
export function onPolicy(io: Io, command: string, file: string): string {
  return isDefaultPolicy(io, file) ? command : `--config ${shellQuote(file)} ${command}`;
}

/** Whether `file` is the policy rootsctl reads without `--config`. */
export function isDefaultPolicy(io: Io, file: string): boolean {
  return file === configFile(io.env, io.cwd);
}
