/** rootsctl's help text. */
export const USAGE = `Usage: rootsctl COMMAND [options]

Ask the mcp-roots daemon which directories each MCP server may see, and change it.

Commands:
  status                         the daemon, its policy, servers and clients
  list SERVER                    the roots SERVER is given now
  check SERVER PATH [--write]    may SERVER read (or write) PATH? exit 1 if not
  explain SERVER [--all]         every rule that applies to SERVER and what it yielded
                                 (deny rules that affect nothing only with --all)
  validate [FILE]                check a policy file (default: the main one); exit 1 on errors
  reload                         re-read the policy files now
  watch SERVER                   print SERVER's roots each time they change (Ctrl-C stops)
  grant SERVER PATH [--for D | --until T] [--read-only] [--name N]
                                 give SERVER a root for a while (default 1h); D is e.g.
                                 90s, 30m, 2h, 1d or 1h30m, at most 30d; read-write
                                 unless --read-only
  revoke SERVER [PATH]           take grants back (all of SERVER's without PATH)
  grants                         the temporary grants in force
  log [--server S] [--refused] [--since 1h] [-f|--follow] [--json]
                                 what was allowed and refused, read from the decision log
                                 in the state directory (with --socket: the one that
                                 daemon writes); --json prints JSON lines
  lockdown | unlock              empty every server's roots until unlock
  init [--force]                 write a starter ~/.config/mcp-roots.yaml
  edit                           edit the policy in $VISUAL or $EDITOR; saved only when valid
  doctor                         check this machine: Node, socket, daemon, policy, inotify,
                                 systemd, sandbox; each line OK or the fix to run
  completion bash|zsh|fish       print a shell completion script
  install-service [--dry-run]    install the systemd user units
  uninstall-service [--dry-run]  remove them

Options:
  --json            print the protocol's result object instead of a table
  --config FILE     the policy file: list, check and explain evaluate it offline instead of
                    asking the daemon; init writes it, edit edits it, validate and doctor check it
  --socket PATH     the daemon's socket (default: $MCP_ROOTS_SOCKET, else
                    $XDG_RUNTIME_DIR/mcp-roots/rootsd.sock, else /run/user/<uid>/mcp-roots/, else
                    /tmp/mcp-roots-<uid>/; then the daemon's socket-path pointer)
  --state-dir DIR   where grants.yaml and decisions.jsonl live (offline evaluation, log)
  -h, --help        this text
  -V, --version     the version

Exit codes: 0 ok, 1 failure or not allowed, 2 usage error, 3 daemon not reachable.
Colour only on a terminal, and never with NO_COLOR set.
Something does not work? \`rootsctl doctor\` says what and how to fix it.
`;
