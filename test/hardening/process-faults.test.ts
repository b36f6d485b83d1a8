/**
 * Process faults. The built daemon SIGKILLed at random moments under load and
 * restarted (stale socket, grants, reconnecting subscribers, the proxy); and the proxy's child
 * server crashing, hanging or writing garbage (the host gets MCP errors, the proxy exits).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import type { Root } from '../../common/types.js';
import { RootsClient } from '../../protocol/client.js';
import { assertFreshBuild } from '../helpers/bin.js';
import { startDaemon } from '../helpers/daemon.js';
import { fuzzSeed, Rng } from '../../bench/fuzz-rng.js';
import { ownedShortDir, proxyCommand, startProxiedFs, waitFor } from '../helpers/proxy.js';
import { spawnDaemon, type DaemonProcess } from '../helpers/spawn-daemon.js';
import { fixtureServer } from '../helpers/repo.js';

const FAULTY = fixtureServer('faulty.mjs');
const KILLS = Number(process.env.FAULT_KILLS ?? 4);

/** The pause between retries while the daemon is down, as a host library backs off; no check waits on it. */
const backoff = (ms: number) => new Promise((r) => setTimeout(r, ms));
const uris = (roots: Root[]) => roots.map((r) => r.uri);

/** A subscriber that reconnects with backoff and subscribes again, as a host library would. */
class ReconnectingSubscriber {
  roots: Root[] | undefined;
  instances = new Set<string>();
  reconnects = 0;
  private client: RootsClient | undefined;
  private stopped = false;

  constructor(
    private readonly socket: string,
    private readonly server: string,
  ) {}

  async start(): Promise<void> {
    let delay = 20;
    while (!this.stopped) {
      try {
        const client = await RootsClient.connect({ socket: this.socket, timeoutMs: 2000 });
        client.on('list_changed', (p) => {
          if (p.server === this.server) this.roots = p.roots;
        });
        client.once('close', () => {
          this.client = undefined;
          this.roots = undefined;
          if (!this.stopped) {
            this.reconnects++;
            void this.start();
          }
        });
        this.client = client;
        const list = await client.listRoots(this.server, { subscribe: true });
        this.instances.add(list._meta['mcp-roots/instance']);
        this.roots = list.roots;
        return;
      } catch {
        await backoff(delay);
        delay = Math.min(delay * 2, 500);
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.client?.close();
  }
}

/** Run `op` with a client, reconnecting whenever the daemon goes away; until `stop()`. */
function loadLoop(
  socket: string,
  op: (c: RootsClient) => Promise<void>,
): { stop: () => Promise<void>; errors: () => number } {
  let stopped = false;
  let errors = 0;
  const done = (async () => {
    let client: RootsClient | undefined;
    while (!stopped) {
      try {
        client ??= await RootsClient.connect({ socket, timeoutMs: 2000 });
        await op(client);
      } catch {
        errors++;
        await client?.close().catch(() => undefined);
        client = undefined;
        await backoff(20);
      }
    }
    await client?.close();
  })();
  return {
    stop: async () => {
      stopped = true;
      await done;
    },
    errors: () => errors,
  };
}

void t.test(
  'SIGKILL under load, restart: no stale socket, no lost grant, everyone converges',
  async (t) => {
    assertFreshBuild('daemon/listen.ts', 'daemon/grants.ts', 'daemon/state.ts');
    const seed = fuzzSeed();
    t.comment(`process-fault seed ${seed} (replay with FUZZ_SEED=${seed})`);
    const rng = new Rng(seed);
    const dir = ownedShortDir(t);
    const tree = join(dir, 'tree');
    mkdirSync(join(tree, 'base'), { recursive: true });
    for (let i = 0; i < 200; i++) mkdirSync(join(tree, `g${i}`));
    const config = join(dir, 'mcp-roots.yaml');
    writeFileSync(config, `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${tree}/base\n`);
    const socket = join(dir, 'run', 'rootsd.sock');
    const args = ['--config', config, '--socket', socket, '--state-dir', join(dir, 'state')];
    const start = async (): Promise<DaemonProcess> => {
      const d = await spawnDaemon([...args, '--settle-ms', '20'], { socket, t });
      // The socket answers a moment before the daemon logs that it listens: wait for the line.
      await waitFor(
        () => d.child.exitCode !== null || /listening on/.test(d.stderr()),
        30_000,
        'the daemon saying it listens',
      );
      if (d.child.exitCode !== null) throw new Error(`the daemon did not start: ${d.stderr()}`);
      return d;
    };
    let daemon = await start();
    // Started before the load: its start (a proxy and a filesystem server) is not what is tested,
    // and under the load loops, which run flat out, it cost seconds of their CPU.
    const proxied = await startProxiedFs(t, { server: 'fs', socket });

    const acked: string[] = [];
    let next = 0;
    let lists = 0;
    const hammer = loadLoop(socket, async (c) => {
      await c.listRoots('fs');
      lists++;
    });
    const granter = loadLoop(socket, async (c) => {
      const path = join(tree, `g${next++ % 200}`);
      await c.grant('fs', path, { seconds: 600 });
      acked.push(path);
    });
    const subscriber = new ReconnectingSubscriber(socket, 'fs');
    await subscriber.start();

    const daemonList = async (): Promise<string[]> => {
      const c = await RootsClient.connect({ socket });
      try {
        return uris((await c.listRoots('fs')).roots);
      } finally {
        await c.close();
      }
    };

    for (let kill = 1; kill <= KILLS; kill++) {
      // The kill lands at a random point of the load: after a random number of acknowledged
      // grants, while lists, grants and the subscriber's traffic are in flight.
      const due = acked.length + rng.int(2, 30);
      await waitFor(() => acked.length >= due, 60_000, `kill ${kill}: grants under way`);
      daemon.child.kill('SIGKILL');
      await daemon.exited;
      const ackedBefore = new Set(acked);
      t.ok(existsSync(socket), `kill ${kill}: the dead daemon's socket file is left behind`);
      daemon = await start();
      t.pass(`kill ${kill}: a new daemon starts on the stale socket`);

      const list = await daemonList();
      const missing = [...ackedBefore].filter((p) => !list.includes(`file://${p}`));
      t.same(missing, [], `kill ${kill}: all ${ackedBefore.size} acknowledged grants survived`);
      t.ok(list.includes(`file://${tree}/base`), `kill ${kill}: the policy root is there`);

      // Convergence is judged against the daemon's list at that moment; grants keep coming.
      await waitFor(
        async () => {
          const now = await daemonList();
          return subscriber.roots !== undefined && uris(subscriber.roots).join() === now.join();
        },
        10_000,
        `kill ${kill}: the subscriber converges`,
      );
      t.pass(`kill ${kill}: the reconnecting subscriber has the daemon's list`);
    }

    await granter.stop();
    await hammer.stop();
    const final = await daemonList();
    await waitFor(
      () => uris(subscriber.roots ?? []).join() === final.join(),
      10_000,
      'the subscriber converges on the final list',
    );
    await waitFor(
      async () =>
        (await proxied.allowed()).join() ===
        final
          .map((u) => fileURLToPath(u))
          .sort()
          .join(),
      // What is tested is that it converges: after the last kill the proxy's reconnect backoff may
      // have reached its 5 s cap, and then its server restarts with the new roots; 15 s was
      // exceeded once on a machine running four suites at once.
      30_000,
      `the proxy converges on the final list\n${proxied.stderr().slice(-3000)}`,
    );
    t.pass('the proxied server sees the final list');
    t.equal(subscriber.instances.size, KILLS + 1, 'the subscriber saw every daemon instance');
    t.comment(
      `${KILLS} kills: ${acked.length} grants acknowledged, ${lists} lists, ` +
        `${hammer.errors() + granter.errors()} requests cut short, ${subscriber.reconnects} reconnects`,
    );
    t.ok(acked.length > KILLS, 'grants were made throughout');
    const grantsFile = readFileSync(join(dir, 'state', 'grants.yaml'), 'utf8');
    t.match(grantsFile, /^# Temporary grants/, 'the grants file is whole');
    await subscriber.stop();
    daemon.child.kill('SIGTERM');
    t.equal(await daemon.exited, 0, 'the last daemon exits cleanly on SIGTERM');
    t.notOk(existsSync(socket), 'and removes its socket');
  },
);

// ---- the proxy's child server misbehaving ----

interface Host {
  send(line: string): void;
  end(): void;
  /** Every line the proxy wrote to its stdout so far. */
  lines: string[];
  answer(id: number, ms?: number): Promise<Record<string, unknown>>;
  stderr: () => string;
  exited: Promise<{ code: number | null; ms: number }>;
}

function startHost(t: Test, socket: string, mode: string, extra: string[] = []): Host {
  const { command, args, env } = proxyCommand(
    ['--server', 'faulty', '--socket', socket, '--log-level', 'debug'],
    [process.execPath, FAULTY, mode, ...extra],
  );
  const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let pending = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => {
    pending += c.toString();
    for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n')) {
      lines.push(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
    }
  });
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  let endedAt = 0;
  const exited = new Promise<{ code: number | null; ms: number }>((resolve) =>
    child.once('exit', (code) => resolve({ code, ms: endedAt ? Date.now() - endedAt : -1 })),
  );
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    send: (line) => child.stdin.write(line + '\n'),
    end: () => {
      endedAt = Date.now();
      child.stdin.end();
    },
    lines,
    async answer(id, ms = 30_000) {
      let found: Record<string, unknown> | undefined;
      await waitFor(
        () => {
          for (const l of lines) {
            const m = JSON.parse(l) as Record<string, unknown>;
            if (m.id === id && !('method' in m)) found = m;
          }
          return found !== undefined;
        },
        ms,
        `an answer to ${id}\n${err}`,
      );
      return found!;
    },
    stderr: () => err,
    exited,
  };
}

/** Every line the proxy wrote to the host is a JSON-RPC 2.0 message. */
function onlyFrames(t: Test, host: Host): void {
  const bad = host.lines.filter((l) => {
    try {
      const m = JSON.parse(l) as Record<string, unknown>;
      return (
        typeof m !== 'object' ||
        m === null ||
        Array.isArray(m) ||
        m.jsonrpc !== '2.0' ||
        !('method' in m || 'result' in m || 'error' in m)
      );
    } catch {
      return true;
    }
  });
  t.same(bad, [], 'the host received nothing but JSON-RPC messages');
}

async function handshake(host: Host): Promise<void> {
  host.send(
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"0"}}}',
  );
  await host.answer(1);
  host.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
}

const CALL = (id: number) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"work","arguments":{"n":1}}}`;

void t.test('the proxy when its server misbehaves', async (t) => {
  const td = await startDaemon(t, 'version: 1\nservers:\n  faulty:\n    roots: []\n');

  await t.test(
    'the server crashes during a call: an error answer, then a clean exit',
    async (t) => {
      const host = startHost(t, td.socket, 'crash');
      await handshake(host);
      host.send(CALL(2));
      const answer = await host.answer(2);
      t.equal((answer.error as { code: number }).code, -32603, 'the call in flight gets an error');
      t.match((answer.error as { message: string }).message, /exited or closed its output/);
      const { code } = await host.exited;
      t.equal(code, 7, 'the proxy exits with the server’s status');
      t.match(host.stderr(), /warn: the server exited with status 7\n/, 'and says it on stderr');
      onlyFrames(t, host);
    },
  );

  await t.test('the server is killed by a signal: stderr names the signal', async (t) => {
    const host = startHost(t, td.socket, 'killed');
    await handshake(host);
    host.send(CALL(2));
    t.ok('error' in (await host.answer(2)), 'the call in flight gets an error');
    t.equal((await host.exited).code, 128 + 9, 'the proxy exits with 128 + the signal');
    t.match(host.stderr(), /warn: the server was ended by SIGKILL \(status 137\)\n/);
  });

  await t.test('the server exits but a grandchild holds its stdout: no hang', async (t) => {
    const pidFile = join(td.dir, 'grandchild.pid');
    t.teardown(() => {
      try {
        process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
      } catch {
        // already gone
      }
      rmSync(pidFile, { force: true });
    });
    const host = startHost(t, td.socket, 'orphan', [pidFile]);
    await handshake(host);
    host.send(CALL(2));
    const answer = await host.answer(2);
    t.ok('error' in answer, 'the call in flight gets an error');
    const { code } = await host.exited;
    t.equal(code, 7, 'the proxy exits with the server’s status');
    // The grandchild lives until the teardown kills it: the proxy did not wait for it to end.
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    t.doesNotThrow(() => process.kill(grandchild, 0), 'while the grandchild still holds stdout');
    onlyFrames(t, host);
  });

  await t.test('the server hangs: the host gives up, the proxy still exits', async (t) => {
    const host = startHost(t, td.socket, 'hang');
    await handshake(host);
    host.send(CALL(2));
    // The server reads its input in order and answers pings: once the ping sent after the call
    // is answered, the call has reached the server, and its answer would have come first.
    host.send('{"jsonrpc":"2.0","id":3,"method":"ping"}');
    t.same((await host.answer(3)).result, {}, 'a ping sent after the call is answered');
    t.notOk(
      host.lines.some((l) => l.includes('"id":2,')),
      'the hanging call has no answer yet',
    );
    // The host closes its side, as one does when it gives up on a server.
    host.end();
    const answer = await host.answer(2);
    t.ok(
      'error' in answer,
      'the call in flight is answered with an error once the server is killed',
    );
    const { code, ms } = await host.exited;
    t.equal(code, 128 + 9, 'a server that ignores EOF and SIGTERM is SIGKILLed');
    t.notMatch(
      host.stderr(),
      /warn: the server (exited|was ended)/,
      'the end the host asked for is no failure to warn of',
    );
    t.comment(`the proxy exited ${ms} ms after its input closed`);
    onlyFrames(t, host);
  });

  await t.test('the server writes garbage: dropped and logged, the session goes on', async (t) => {
    const host = startHost(t, td.socket, 'garbage');
    await handshake(host);
    host.send(CALL(2));
    const answer = await host.answer(2);
    t.same(answer.result, { content: [{ type: 'text', text: 'done' }] }, 'the call is answered');
    host.send('{"jsonrpc":"2.0","id":3,"method":"ping"}');
    t.same((await host.answer(3)).result, {}, 'and so is the next request');
    onlyFrames(t, host);
    t.match(host.stderr(), /dropped a line from the server that is not a JSON-RPC message/);
    t.match(host.stderr(), /dropped a JSON line from the server that is not a JSON-RPC message/);
    host.end();
    t.equal((await host.exited).code, 0, 'the proxy exits with the server’s status');
  });
});
