/**
 * Run the built mcp-roots-proxy under an SDK Client acting as the host. The SDK is loaded only
 * when a host is started (`startProxiedFs`): most tests import this module for `proxyFor`,
 * `ownedShortDir` or `waitFor` alone, and under tap's module tracker the SDK client and its
 * schemas cost a test process about 0.7 s of CPU to load.
 */
import { mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { assertFreshBuild, bin, REPO } from './bin.js';
import { repoPath } from './repo.js';
import { toolOutcome } from './tool-result.js';

/** The reference filesystem server (2025 era, SDK v1). */
export const FS_SERVER = repoPath(
  'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js',
);

/**
 * `node` arguments and environment that start the built proxy. The built file starts in a
 * fraction of the time a TypeScript loader needs (seconds per process on a loaded machine, which
 * once made every proxy test's first wait a race), and `npm test` builds before tap runs; a bare
 * `tap` run after an edit fails loudly on a stale build instead of testing old code.
 */
export function proxyCommand(
  proxyArgs: string[],
  serverCommand: string[],
): { command: string; args: string[]; env: Record<string, string> } {
  assertFreshBuild(...PROXY_SOURCES);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  return {
    command: process.execPath,
    args: [bin('proxy'), ...proxyArgs, '--', ...serverCommand],
    env,
  };
}

/** What every test's proxy is given: its server name, the daemon's socket, and debug logging. */
export interface ProxyTarget {
  server: string;
  socket: string;
  /** More options, after those three. */
  extra?: string[];
}

/** `proxyCommand` for `target`, in front of `serverCommand`. */
export function proxyFor(
  target: ProxyTarget,
  serverCommand: string[],
): { command: string; args: string[]; env: Record<string, string> } {
  const { server, socket, extra = [] } = target;
  return proxyCommand(
    ['--server', server, '--socket', socket, '--log-level', 'debug', ...extra],
    serverCommand,
  );
}

/** Every source file the proxy is built from (its own, and the layers below it). */
const PROXY_SOURCES = ['proxy', 'protocol', 'common', 'policies'].flatMap((dir) =>
  readdirSync(join(REPO, dir))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => `${dir}/${f}`),
);

export interface ProxiedServer {
  client: Client;
  /** Everything the proxy and the server wrote to stderr so far. */
  stderr: () => string;
  /** How many `roots/list` requests reached the host. */
  hostRootsCalls: () => number;
  /** `list_allowed_directories`, sorted. */
  allowed(): Promise<string[]>;
  /** Call a tool; returns its text and whether it is an error. */
  call(name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
  close(): Promise<void>;
}

/** Start the filesystem server under the proxy for `server`, with an SDK Client as the host. */
export async function startProxiedFs(
  t: { teardown(fn: () => unknown): void },
  opts: {
    server: string;
    socket: string;
    hostRoots?: boolean;
    extra?: string[];
    /** The server's command after `node` (default: the filesystem server, with no arguments). */
    serverArgs?: string[];
    /**
     * Declare form elicitation and answer each `elicitation/create` with this; `signal` aborts
     * when the proxy cancels its question.
     */
    elicit?: (params: ElicitRequest['params'], signal: AbortSignal) => Promise<ElicitResult>;
  },
): Promise<ProxiedServer> {
  const [{ Client }, { ElicitRequestSchema, ListRootsRequestSchema }, { stdioWithStderr }] =
    await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/types.js'),
      import('./stdio-host.js'),
    ]);
  const { transport, stderr } = stdioWithStderr(
    proxyFor({ server: opts.server, socket: opts.socket, extra: opts.extra ?? [] }, [
      process.execPath,
      ...(opts.serverArgs ?? [FS_SERVER]),
    ]),
  );
  const hostRoots = opts.hostRoots ?? true;
  const client = new Client(
    { name: 'test-host', version: '0' },
    {
      capabilities: {
        ...(hostRoots ? { roots: { listChanged: true } } : {}),
        ...(opts.elicit ? { elicitation: { form: {} } } : {}),
      },
    },
  );
  const elicit = opts.elicit;
  if (elicit)
    client.setRequestHandler(ElicitRequestSchema, (req, extra) => elicit(req.params, extra.signal));
  let rootsCalls = 0;
  if (hostRoots) {
    client.setRequestHandler(ListRootsRequestSchema, () => {
      rootsCalls++;
      return { roots: [{ uri: 'file:///', name: 'the host would give everything' }] };
    });
  }
  await client.connect(transport);
  const call = async (name: string, a: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: a }, undefined, { timeout: 60_000 });
    return toolOutcome(result);
  };
  const ps: ProxiedServer = {
    client,
    stderr,
    hostRootsCalls: () => rootsCalls,
    async allowed() {
      const { text } = await call('list_allowed_directories', {});
      return text
        .split('\n')
        .slice(1)
        .filter((l) => l.trim() !== '')
        .sort();
    },
    call,
    close: () => client.close(),
  };
  t.teardown(async () => {
    await ps.close();
    // For a failing run: PROXY_TEST_STDERR=dir keeps each proxy's stderr.
    const keep = process.env.PROXY_TEST_STDERR;
    if (keep)
      writeFileSync(join(keep, `${opts.server}-${process.pid}-${Date.now()}.log`), stderr());
  });
  return ps;
}

/** Poll until a condition holds (kept here for the tests that import it from this module). */
export { waitFor } from './poll.js';

/** The canonical form of a test path (tmpdir may be a symlink). */
export function real(p: string): string {
  return realpathSync(p);
}

/** A short temp directory that `t` removes at the end (for `startDaemon(t, policy, {dir})`). */
export function ownedShortDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mr-')));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
