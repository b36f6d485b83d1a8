/** `mcp-roots-proxy --help`: the usage line, then what each option does and its default. */
import { USAGE } from './options.js';

export const HELP = `${USAGE}

Wraps a stdio MCP server: gives it the roots the mcp-roots policy gives NAME, and checks each
tool call's paths against the policy.

Options:
  --server NAME           the server's name in the policy (required)
  --socket PATH           the daemon's socket (default: $MCP_ROOTS_SOCKET, else
                          $XDG_RUNTIME_DIR/mcp-roots/rootsd.sock, else
                          /run/user/<uid>/mcp-roots/rootsd.sock, else
                          /tmp/mcp-roots-<uid>/rootsd.sock; then the socket-path pointer
                          in the daemon's state directory)
  --sandbox               run the server under bubblewrap, seeing only the system, its roots
                          and its own program (also when the policy says sandbox:); never
                          unsandboxed if the sandbox cannot start
  --no-enforce            do not check tool calls (the server still gets only its roots; a
                          sandbox still confines it)
  --ask-timeout SECONDS   how long a question to the person (the policy's ask:) waits for
                          an answer (default 60)
  --allow-unknown-server  start although no entry of the policy names the server
  --env NAME=VALUE        set a variable for the server (repeatable)
  --cwd DIR               the server's working directory
  --log-level LEVEL       error, warn, info (default) or debug, on stderr
  -h, --help              this text
  -V, --version           the version

Exit status: the server's; 2 for a usage error. More: README, "Wiring a host" and "Sandboxing".
`;
