/** Run rootsctl's `main` in-process and capture what it prints. */
import { main } from '../../cli/run.js';

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

/** Call `rootsctl ARGV` with the given environment and working directory. */
export async function rootsctl(
  argv: string[],
  opts: {
    env?: Record<string, string | undefined>;
    cwd?: string;
    interrupted?: () => Promise<void>;
  } = {},
): Promise<CliResult> {
  let out = '';
  let err = '';
  const code = await main(argv, {
    out: (s) => (out += s),
    err: (s) => (err += s),
    env: opts.env ?? { HOME: '/nonexistent-home' },
    cwd: opts.cwd ?? process.cwd(),
    isTTY: false,
    ...(opts.interrupted ? { interrupted: opts.interrupted } : {}),
  });
  return { code, out, err };
}
