/**
 * Every rootsctl command and where its handler lives. A handler is imported only when its command
 * runs, so `rootsctl status` never loads the policy engine and `rootsctl validate` never loads the
 * socket client.
 */
import type { ExitCode, Io } from '../io.js';
import type { Options } from '../options.js';
import { SPECS, type CommandName, type CommandSpec } from './spec.js';

/** What runs a command: the positional arguments (already counted) and the options. */
export type Handler = (io: Io, args: string[], opts: Options) => Promise<ExitCode>;

const HANDLERS: Record<CommandName, () => Promise<Handler>> = {
  status: async () => (await import('./daemon.js')).status,
  reload: async () => (await import('./daemon.js')).reload,
  lockdown: async () => (await import('./daemon.js')).lockdown,
  unlock: async () => (await import('./daemon.js')).unlock,
  list: async () => (await import('./query.js')).list,
  check: async () => (await import('./query.js')).check,
  explain: async () => (await import('./query.js')).explain,
  validate: async () => (await import('./validate.js')).validate,
  watch: async () => (await import('./watch.js')).watch,
  grant: async () => (await import('./grants.js')).grant,
  revoke: async () => (await import('./grants.js')).revoke,
  grants: async () => (await import('./grants.js')).grants,
  init: async () => (await import('./init.js')).init,
  edit: async () => (await import('./edit.js')).edit,
  log: async () => (await import('./log.js')).log,
  'install-service': async () => (await import('./service.js')).install,
  'uninstall-service': async () => (await import('./service.js')).uninstall,
  doctor: async () => (await import('./doctor.js')).doctor,
  completion: async () => (await import('./completion.js')).completion,
  'complete-servers': async () => (await import('./completion.js')).completeServers,
};

/** The command named `name` with its handler loader, or undefined for an unknown name. */
export function lookup(name: string): (CommandSpec & { load: () => Promise<Handler> }) | undefined {
  if (!Object.hasOwn(SPECS, name)) return undefined;
  const key = name as CommandName;
  return { ...(SPECS[key] as CommandSpec), load: HANDLERS[key] };
}
