/** The list of errors one policy file gets: one line each, no repeats, in file order, capped. */
import type { PolicyError } from '../common/types.js';

/** How many errors one file reports at most (a file of 10,000 bad entries needs only the first few). */
export const MAX_ERRORS = 100;

/** One line, no trailing period or colon. */
export function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim().replace(/[.:]$/, '');
}

export function errorAt(file: string, line: number, column: number, message: string): PolicyError {
  return { file, line, column, message };
}

export function dedupe(errors: PolicyError[]): PolicyError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const k = `${e.line}:${e.column}:${e.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Sort by position, keeping the first MAX_ERRORS and a note of how many more there are. */
export function sortErrors(errors: PolicyError[]): PolicyError[] {
  const sorted = errors.sort((a, b) => a.line - b.line || a.column - b.column);
  const next = sorted[MAX_ERRORS];
  if (next === undefined) return sorted;
  const more = sorted.length - MAX_ERRORS;
  const message = `${more} more error${more === 1 ? '' : 's'} not shown; fix the ones above first`;
  return [...sorted.slice(0, MAX_ERRORS), { ...next, message }];
}
