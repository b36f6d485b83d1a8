/**
 * The answers rootsctl gives without loading any command: `--version` and `--help` alone on the
 * command line. The executable (cli/cached-main.ts) prints them before it reads the bundle, so
 * they cost Node's own start and one small file read; `main` (cli/run.ts) answers them first through
 * this function too.
 */
import { packageVersion } from '../common/package-info.js';
import { USAGE } from './usage.js';

/** The text for stdout (exit 0) when `args` asks only for the version or the help; else undefined. */
export function quickAnswer(args: readonly string[]): string | undefined {
  if (args.length !== 1) return undefined;
  switch (args[0]) {
    case '--version':
    case '-V':
      return `${packageVersion()}\n`;
    case '--help':
    case '-h':
    case 'help':
      return USAGE;
    default:
      return undefined;
  }
}
