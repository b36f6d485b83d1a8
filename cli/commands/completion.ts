/**
 * `rootsctl completion bash|zsh|fish`: a completion script to source from the shell's start-up
 * file; and `complete-servers`, which the scripts call for server names (the running daemon's,
 * else the policy file's).
 */
import { RootsError } from '../../common/errors.js';
import { EXIT, type ExitCode, type Io } from '../io.js';
import { OPTIONS, type Options } from '../options.js';
import { SPECS, type CommandSpec } from './spec.js';

const SHELLS = ['bash', 'zsh', 'fish'] as const;

/** Options that take a value, and which of them name a file. */
const VALUE_OPTIONS = Object.entries(OPTIONS)
  .filter(([, o]) => o.type === 'string')
  .map(([name]) => `--${name}`);
const FILE_OPTIONS = ['--config', '--socket', '--state-dir'];

function visible(): [string, CommandSpec][] {
  return (Object.entries(SPECS) as [string, CommandSpec][]).filter(([, s]) => !s.hidden);
}

function bash(): string {
  const commands = visible().map(([name]) => name);
  const optionCases = visible()
    .map(([name, s]) => `      ${name}) opts="${s.options.map((o) => `--${o}`).join(' ')}" ;;`)
    .join('\n');
  const serverCommands = visible()
    .filter(([, s]) => s.server)
    .map(([name]) => name)
    .join('|');
  return `# rootsctl completion for bash. Load it from ~/.bashrc:
#   source <(rootsctl completion bash)
_rootsctl() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]}
  local cmd= n=0 i w opts
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=\${COMP_WORDS[i]}
    case $w in
      ${VALUE_OPTIONS.join('|')}) ((i++)) ;;
      -*) ;;
      *) if [[ -z $cmd ]]; then cmd=$w; else ((n++)); fi ;;
    esac
  done
  case $prev in
    ${FILE_OPTIONS.join('|')}) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    ${VALUE_OPTIONS.filter((o) => !FILE_OPTIONS.includes(o)).join('|')}) COMPREPLY=(); return ;;
  esac
  if [[ -z $cmd ]]; then
    COMPREPLY=($(compgen -W "${commands.join(' ')} --help --version" -- "$cur"))
    return
  fi
  if [[ $cur == -* ]]; then
    case $cmd in
${optionCases}
      *) opts= ;;
    esac
    COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
    return
  fi
  case $cmd in
    ${serverCommands})
      if ((n == 0)); then
        COMPREPLY=($(compgen -W "$(rootsctl complete-servers 2>/dev/null)" -- "$cur"))
      else
        COMPREPLY=($(compgen -f -- "$cur"))
      fi ;;
    validate) COMPREPLY=($(compgen -f -- "$cur")) ;;
    completion) COMPREPLY=($(compgen -W "${SHELLS.join(' ')}" -- "$cur")) ;;
    *) COMPREPLY=() ;;
  esac
}
complete -F _rootsctl rootsctl
`;
}

function zsh(): string {
  // zsh runs the bash function through its bash compatibility layer: one script to keep right.
  return `# rootsctl completion for zsh. Load it from ~/.zshrc:
#   source <(rootsctl completion zsh)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bash().split('\n').slice(2).join('\n')}`;
}

function fish(): string {
  const lines = [
    '# rootsctl completion for fish. Load it from ~/.config/fish/config.fish:',
    '#   rootsctl completion fish | source',
    'complete -c rootsctl -f',
    "complete -c rootsctl -n '__fish_use_subcommand' -l help -d 'help'",
    "complete -c rootsctl -n '__fish_use_subcommand' -l version -d 'version'",
  ];
  const names = visible().map(([name]) => name);
  for (const name of names)
    lines.push(`complete -c rootsctl -n '__fish_use_subcommand' -a ${name}`);
  for (const [name, s] of visible()) {
    for (const o of s.options) {
      const takes = VALUE_OPTIONS.includes(`--${o}`);
      const file = FILE_OPTIONS.includes(`--${o}`);
      lines.push(
        `complete -c rootsctl -n '__fish_seen_subcommand_from ${name}' -l ${o}${takes ? ' -r' : ''}${file ? ' -F' : ''}`,
      );
    }
    if (s.server) {
      lines.push(
        `complete -c rootsctl -n '__fish_seen_subcommand_from ${name}; and test (count (commandline -opc)) -eq 2' -a '(rootsctl complete-servers 2>/dev/null)'`,
      );
      if (s.args[1] > 1)
        lines.push(
          `complete -c rootsctl -n '__fish_seen_subcommand_from ${name}; and test (count (commandline -opc)) -ge 3' -F`,
        );
    }
  }
  lines.push(`complete -c rootsctl -n '__fish_seen_subcommand_from validate' -F`);
  lines.push(
    `complete -c rootsctl -n '__fish_seen_subcommand_from completion' -a '${SHELLS.join(' ')}'`,
  );
  return `${lines.join('\n')}\n`;
}

/** `rootsctl completion SHELL`. */
export function completion(io: Io, [shell]: string[]): Promise<ExitCode> {
  const scripts = { bash, zsh, fish };
  if (!(SHELLS as readonly string[]).includes(shell!)) {
    throw new RootsError('USAGE', `completion is for ${SHELLS.join(', ')}; not "${shell}"`);
  }
  io.out(scripts[shell as (typeof SHELLS)[number]]());
  return Promise.resolve(EXIT.ok);
}

/**
 * `rootsctl complete-servers`: server names, one a line, for the completion scripts: from the
 * running daemon, else from the policy file. Quiet and exit 0 whatever fails: a completion that
 * prints errors into the command line is worse than none.
 */
export async function completeServers(io: Io, _args: string[], opts: Options): Promise<ExitCode> {
  const names = (await fromDaemon(io, opts)) ?? (await fromPolicy(io, opts)) ?? [];
  // A pattern (`*`) is not a name anyone types.
  for (const n of names) if (!n.includes('*')) io.out(`${n}\n`);
  return EXIT.ok;
}

async function fromDaemon(io: Io, opts: Options): Promise<string[] | undefined> {
  if (opts.config !== undefined) return undefined;
  try {
    const { connect } = await import('../connect.js');
    const client = await connect(io, opts.socket);
    try {
      return (await client.status()).servers.map((s) => s.name);
    } finally {
      await client.close();
    }
  } catch {
    return undefined;
  }
}

async function fromPolicy(io: Io, opts: Options): Promise<string[] | undefined> {
  try {
    const { evaluateOffline } = await import('../offline.js');
    const { evaluation } = await evaluateOffline(io, { config: opts.config, withGrants: false });
    return evaluation.resolved.serverNames();
  } catch {
    return undefined;
  }
}
