/**
 * Whether the policy means the `--server` name, and what the person reads when it may not: a name
 * no entry covers (most likely a typo: the handshake fails, unless `--allow-unknown-server`), or a
 * name only the catch-all `'*'` covers (a typo gets `'*'`'s rules silently: a warning).
 */
import { closest } from '../common/levenshtein.js';
import { shellQuote } from '../common/shell-quote.js';
import { BARE_COMMANDS, type HintCommands } from './hint-commands.js';

/** How the texts below name rootsctl (hint-commands.ts). */
type Rootsctl = Pick<HintCommands, 'rootsctl' | 'rootsctlFile'>;

/** How the policy covers `--server`, as the proxy learned it from the daemon. */
export type ServerNaming =
  /** An entry or a grant names it, or a pattern narrower than `'*'` covers it. */
  | { kind: 'named' }
  /** Only `'*'` covers it; `policyServers` are the names the policy's entries give. */
  | { kind: 'catch-all'; policyServers: string[] }
  /** Nothing covers it. */
  | { kind: 'unknown'; policyServers: string[] };

/** " Did you mean …? The policy's servers: …." */
function alternatives(server: string, known: readonly string[]): string {
  const near = closest(server, known);
  return (
    (near === undefined ? '' : ` Did you mean ${JSON.stringify(near)}?`) +
    (known.length > 0
      ? ` The policy's servers: ${known.join(', ')}.`
      : ' The policy names no servers.')
  );
}

/** What the person reads when `--server` names no entry of the policy (the handshake fails). */
export function unknownServerText(
  server: string,
  known: readonly string[],
  { rootsctl, rootsctlFile }: Rootsctl = BARE_COMMANDS,
): string {
  return (
    `no entry of the policy names the server ${JSON.stringify(server)} (--server ${server}), so it would get no roots and every call with a path would be refused.` +
    alternatives(server, known) +
    ` Fix --server in the host's configuration, or give the server roots: an entry in the policy the daemon serves (\`${rootsctl} status\` names its file; \`${rootsctlFile} --config FILE edit\` edits it), or a directory for a while (\`${rootsctl} grant ${shellQuote(server)} DIRECTORY --for 1h\`); \`--allow-unknown-server\` starts it anyway, for a policy about to gain it.`
  );
}

/** The same, when `--allow-unknown-server` let the session start. */
export function allowedUnknownText(server: string, known: readonly string[]): string {
  return (
    `no entry of the policy names the server ${JSON.stringify(server)} (--server ${server}); started anyway, as --allow-unknown-server allows: it gets no roots and every call with a path is refused until the policy names it.` +
    alternatives(server, known)
  );
}

/** When only `'*'` covers the name: it works, but a typo would work the same way. */
export function catchAllText(server: string, known: readonly string[]): string {
  const q = JSON.stringify(server);
  return (
    `no entry of the policy names the server ${q} (--server ${server}): it gets only what the policy's '*' entry gives every server, as a typo in --server would.` +
    alternatives(server, known) +
    ` If ${q} is meant to have only the rules of '*', name it in the policy (\`${server}: {}\` under \`servers:\`) and this warning goes.`
  );
}

/**
 * The warning for `naming`, or undefined when there is nothing to say. `allowUnknownServer`:
 * whether `--allow-unknown-server` acknowledged a name nothing covers.
 */
export function namingWarning(
  server: string,
  naming: ServerNaming,
  allowUnknownServer: boolean,
  rootsctl: Rootsctl = BARE_COMMANDS,
): string | undefined {
  if (naming.kind === 'catch-all') return catchAllText(server, naming.policyServers);
  if (naming.kind === 'unknown') {
    return allowUnknownServer
      ? allowedUnknownText(server, naming.policyServers)
      : unknownServerText(server, naming.policyServers, rootsctl);
  }
  return undefined;
}
