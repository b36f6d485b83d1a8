/**
 * The command a rootsctl command line names, found without parsing it: the executable
 * (cli/cached-main.ts) uses it to load only the bundle that holds that command. It agrees with
 * `main` (cli/run.ts: node:util `parseArgs` over OPTIONS) on every command line `parseArgs`
 * accepts; on one it refuses, any answer will do, since `main` reports the usage error before it
 * loads a command.
 */
import { OPTIONS, type OptionName } from './options.js';

const SHORT = new Map<string, OptionName>(
  Object.entries(OPTIONS).flatMap(([name, o]) =>
    'short' in o ? [[o.short, name as OptionName] as const] : [],
  ),
);

const takesValue = (name: OptionName | undefined) =>
  name !== undefined && OPTIONS[name].type === 'string';

/** The first positional argument of `args` (the words after `rootsctl`), or undefined. */
export function commandWord(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return args[i + 1];
    if (arg.startsWith('--')) {
      // `--name value` takes the next word; `--name=value` and flags do not.
      const name = arg.slice(2);
      if (Object.hasOwn(OPTIONS, name) && takesValue(name as OptionName)) i++;
    } else if (arg.startsWith('-') && arg.length > 1) {
      // A group of short options: one that takes a value takes the rest, or the next word.
      for (let j = 1; j < arg.length; j++) {
        if (!takesValue(SHORT.get(arg[j]!))) continue;
        if (j === arg.length - 1) i++;
        break;
      }
    } else return arg;
  }
  return undefined;
}
