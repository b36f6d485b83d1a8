/** One line of `rootsctl doctor`: what was checked, how it went, and the fix to run when it did not. */
export type Verdict = 'ok' | 'warn' | 'fail';

export interface Check {
  /** Short name of what was checked, e.g. "node", "socket directory". */
  name: string;
  verdict: Verdict;
  /** What is true, in a line. */
  detail: string;
  /** Commands or steps that fix it (for warn and fail). */
  fix?: string[];
}

export const ok = (name: string, detail: string): Check => ({ name, verdict: 'ok', detail });
export const warn = (name: string, detail: string, fix: string[] = []): Check => ({
  name,
  verdict: 'warn',
  detail,
  fix,
});
export const fail = (name: string, detail: string, fix: string[] = []): Check => ({
  name,
  verdict: 'fail',
  detail,
  fix,
});
