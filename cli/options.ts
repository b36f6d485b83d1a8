/** rootsctl's options: the parser's table and the parsed values every command receives. */

/** Every option of every command, for `node:util` parseArgs. */
export const OPTIONS = {
  json: { type: 'boolean' },
  config: { type: 'string' },
  socket: { type: 'string' },
  'state-dir': { type: 'string' },
  write: { type: 'boolean' },
  for: { type: 'string' },
  until: { type: 'string' },
  'read-only': { type: 'boolean' },
  name: { type: 'string' },
  force: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  all: { type: 'boolean' },
  server: { type: 'string' },
  refused: { type: 'boolean' },
  since: { type: 'string' },
  follow: { type: 'boolean', short: 'f' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
} as const;

export type OptionName = keyof typeof OPTIONS;

/** The parsed options: strings for value options, booleans for flags. */
export type Options = {
  [K in OptionName]?: (typeof OPTIONS)[K]['type'] extends 'string' ? string : boolean;
};
