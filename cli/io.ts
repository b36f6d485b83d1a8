/** What a command may touch of its process: passed in, so tests can run `main` in-process. */
import type { Bin } from '../common/command-line.js';
import type { Env } from '../common/locations.js';
import { actedOnEscaped } from '../common/acted-on.js';
import { terminalJson } from './terminal-text.js';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: Env;
  cwd: string;
  /** Whether stdout is a terminal (tables may use colour). */
  isTTY: boolean;
  /** Resolves when the user interrupts (Ctrl-C) a long-running command such as `watch`; called only by such commands, so others keep Ctrl-C's default. */
  interrupted?: () => Promise<void>;
  /**
   * How the person runs this installation's commands, for the commands hints show
   * (common/command-line.ts); the executable sets it, in-process callers get the bare names.
   */
  command?: (bin: Bin) => string;
}

/** Exit codes of rootsctl (README.md "rootsctl"). */
export const EXIT = { ok: 0, fail: 1, usage: 2, unreachable: 3 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Print data as JSON (the stable contract) or hand it to a table printer. */
export function emit<T>(io: Io, json: boolean, data: T, table: (data: T) => string): void {
  io.out(json ? `${terminalJson(data, 2)}\n` : table(data));
}

/**
 * Lay out rows as aligned columns. Cells hold names nobody checked (a directory an agent made, a
 * daemon's answer): what a terminal would act on is escaped in each (common/acted-on.ts).
 * `widths`, when given, holds each column's width so far: the rows are padded to it and it
 * grows to fit them, so rows printed a few at a time (`log --follow`) line up with those before.
 */
export function columns(given: string[][], widths: number[] = []): string {
  const rows = given.map((row) => row.map((cell) => actedOnEscaped(cell)));
  for (const row of rows)
    row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) =>
      row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '),
    )
    .join('\n')
    .concat(rows.length > 0 ? '\n' : '');
}
