/** An SDK stdio transport to a command, with everything the command writes to stderr kept. */
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/** An SDK stdio transport to `cmd`, not yet started, and everything its process writes to stderr. */
export function stdioWithStderr(cmd: {
  command: string;
  args: string[];
  env: Record<string, string>;
}): { transport: StdioClientTransport; stderr: () => string } {
  const transport = new StdioClientTransport({ ...cmd, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  return { transport, stderr: () => err };
}
