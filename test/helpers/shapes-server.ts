/** Run the schema-shapes fixture server under mcp-roots-proxy, with an SDK Client as the host. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CompleteResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { proxyCommand } from './proxy.js';
import { fixtureServer } from './repo.js';
import { toolOutcome } from './tool-result.js';

/** The fixture server's entry. */
export const SHAPES_SERVER = fixtureServer('schema-shapes.mjs');

/** A tool call's or a resource read's text, and whether it is an error. */
export interface Answer {
  text: string;
  isError: boolean;
}

export interface ProxiedShapes {
  client: Client;
  stderr: () => string;
  call(name: string, args: Record<string, unknown>): Promise<Answer>;
  /** `resources/read`; a JSON-RPC error comes back as `isError` with its message. */
  read(uri: string): Promise<Answer>;
  /** `prompts/get`; a JSON-RPC error comes back as `isError` with its message. */
  prompt(name: string, args: Record<string, string>): Promise<Answer>;
  /**
   * `completion/complete` with these params, sent as they are (odd shapes too); the values offered
   * one a line, or a JSON-RPC error as `isError` with its message.
   */
  complete(params: Record<string, unknown>): Promise<Answer>;
}

/** Start the fixture under the proxy for `server`; `t` closes it at the end. */
export async function startProxiedShapes(
  t: { teardown(fn: () => unknown): void },
  opts: { server: string; socket: string },
): Promise<ProxiedShapes> {
  const { command, args, env } = proxyCommand(
    ['--server', opts.server, '--socket', opts.socket, '--log-level', 'debug'],
    [process.execPath, SHAPES_SERVER],
  );
  const transport = new StdioClientTransport({ command, args, env, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const client = new Client({ name: 'test-host', version: '0' }, { capabilities: {} });
  await client.connect(transport);
  t.teardown(() => client.close());
  return {
    client,
    stderr: () => err,
    async call(name, a) {
      const result = await client.callTool({ name, arguments: a }, undefined, { timeout: 15_000 });
      return toolOutcome(result);
    },
    async read(uri) {
      try {
        const result = await client.readResource({ uri }, { timeout: 15_000 });
        const text = result.contents.map((c) => ('text' in c ? c.text : '')).join('\n');
        return { text, isError: false };
      } catch (e) {
        return { text: (e as Error).message, isError: true };
      }
    },
    async prompt(name, a) {
      try {
        const result = await client.getPrompt({ name, arguments: a }, { timeout: 15_000 });
        const text = result.messages
          .map((m) => ('text' in m.content ? m.content.text : ''))
          .join('\n');
        return { text, isError: false };
      } catch (e) {
        return { text: (e as Error).message, isError: true };
      }
    },
    async complete(params) {
      try {
        const request = { method: 'completion/complete' as const, params };
        const result = await client.request(request, CompleteResultSchema, { timeout: 15_000 });
        return { text: result.completion.values.join('\n'), isError: false };
      } catch (e) {
        return { text: (e as Error).message, isError: true };
      }
    },
  };
}
