/** What each rootsctl command takes: read by the parser, `--help`'s checks and the completion scripts. */
import type { OptionName } from '../options.js';

export interface CommandSpec {
  /** Positional arguments: at least, at most. */
  args: [number, number];
  options: OptionName[];
  /** Whether the first argument is a server name (completed from the daemon or the policy). */
  server?: boolean;
  /** Left out of completion (an internal helper of the completion scripts). */
  hidden?: boolean;
}

const DAEMON: OptionName[] = ['json', 'socket'];
const QUERY: OptionName[] = ['json', 'socket', 'config', 'state-dir'];

export const SPECS = {
  status: { args: [0, 0], options: DAEMON },
  list: { args: [1, 1], options: QUERY, server: true },
  check: { args: [2, 2], options: [...QUERY, 'write'], server: true },
  explain: { args: [1, 1], options: [...QUERY, 'all'], server: true },
  validate: { args: [0, 1], options: ['json', 'config', 'state-dir'] },
  reload: { args: [0, 0], options: DAEMON },
  watch: { args: [1, 1], options: DAEMON, server: true },
  grant: { args: [2, 2], options: [...DAEMON, 'for', 'until', 'read-only', 'name'], server: true },
  revoke: { args: [1, 2], options: DAEMON, server: true },
  grants: { args: [0, 0], options: DAEMON },
  lockdown: { args: [0, 0], options: DAEMON },
  unlock: { args: [0, 0], options: DAEMON },
  init: { args: [0, 0], options: ['force', 'config'] },
  edit: { args: [0, 0], options: ['config', 'state-dir'] },
  log: {
    args: [0, 0],
    options: ['json', 'socket', 'state-dir', 'server', 'refused', 'since', 'follow'],
  },
  'install-service': { args: [0, 0], options: ['dry-run'] },
  'uninstall-service': { args: [0, 0], options: ['dry-run'] },
  doctor: { args: [0, 0], options: ['json', 'socket', 'config'] },
  completion: { args: [1, 1], options: [] },
  'complete-servers': { args: [0, 0], options: ['socket', 'config'], hidden: true },
} satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof SPECS;
