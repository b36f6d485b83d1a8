/**
 * A seeded, bounded socket fuzzer against the built daemon running as a child
 * process (so that a crash is an exit and memory is the child's). Replay a failure with
 * FUZZ_SEED=<seed>; FUZZ_SECONDS makes the run longer (bench/fuzz-socket.ts is the long run).
 */
import { realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { RootsClient } from '../../protocol/client.js';
import { assertFreshBuild } from '../helpers/bin.js';
import { shortDir, startDaemon } from '../helpers/daemon.js';
import { fuzzSeed, Rng } from '../../bench/fuzz-rng.js';
import {
  addStats,
  alive,
  CHECKED_SERVER,
  emptyStats,
  fuzzRound,
  memoryKiB,
  PARAM_TABLE,
  writeFuzzTarget,
} from '../../bench/fuzz-engine.js';
import { rawConnect } from '../helpers/raw.js';
import { spawnDaemon } from '../helpers/spawn-daemon.js';

const SECONDS = Number(process.env.FUZZ_SECONDS ?? 10);
const MAX_ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 30);
/** Rounds run whatever the clock says: a loaded machine has taken 10 s for one. */
const MIN_ROUNDS = Math.min(3, MAX_ROUNDS);
const CONNECTIONS = 20;
const MESSAGES = 12;
/** Peak resident memory the daemon may reach under the fuzzer. */
const MAX_HWM_KIB = 512 * 1024;

void t.test('the daemon survives the socket fuzzer and keeps answering correctly', async (t) => {
  assertFreshBuild('protocol/messages.ts', 'protocol/connection.ts', 'daemon/server.ts');
  const seed = fuzzSeed();
  t.comment(`socket fuzz seed ${seed} (replay with FUZZ_SEED=${seed})`);
  const dir = realpathSync(shortDir());
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { config, socket } = writeFuzzTarget(dir);
  const d = await spawnDaemon(
    [
      '--config',
      config,
      '--socket',
      socket,
      '--state-dir',
      join(dir, 'state'),
      '--log-level',
      'warn',
    ],
    { socket, t },
  );
  const pid = d.child.pid!;
  t.ok(alive(pid), 'the daemon started');

  const list = async (): Promise<string> => {
    const c = await RootsClient.connect({ socket, timeoutMs: 10_000 });
    try {
      return JSON.stringify((await c.listRoots(CHECKED_SERVER)).roots);
    } finally {
      await c.close();
    }
  };
  const expected = await list();
  t.equal((JSON.parse(expected) as unknown[]).length, 4, 'the checked server has its four roots');
  t.ok(PARAM_TABLE.length >= 25, `the wrong-types table covers ${PARAM_TABLE.length} params`);

  const rng = new Rng(seed);
  const total = emptyStats();
  const deadline = Date.now() + SECONDS * 1000;
  let rounds = 0;
  let peak = 0;
  while (rounds < MIN_ROUNDS || (rounds < MAX_ROUNDS && Date.now() < deadline)) {
    const stats = await fuzzRound({
      socket,
      rng,
      connections: CONNECTIONS,
      messages: MESSAGES,
      expected,
      round: rounds,
    });
    addStats(total, stats);
    rounds++;
    if (!alive(pid) || d.child.exitCode !== null) {
      t.fail(`the daemon exited in round ${rounds} (seed ${seed}): ${d.stderr().slice(-2000)}`);
      return;
    }
    peak = Math.max(peak, memoryKiB(pid).hwm);
    const now = await list();
    if (now !== expected) {
      t.equal(now, expected, `roots/list after round ${rounds} (seed ${seed})`);
      return;
    }
  }
  t.comment(
    `${rounds} rounds: ${total.messages} messages (${(total.bytes / 1024 / 1024).toFixed(1)} MiB), ` +
      `${total.connections} connections, ${total.answers} answers, ${total.cutOff} cut off, ` +
      `${total.probesOk}/${total.probes} probes, peak RSS ${(peak / 1024).toFixed(0)} MiB`,
  );
  t.same(total.malformed, [], `every line from the daemon is a well-formed answer (seed ${seed})`);
  t.same(total.internalErrors, [], `no request made a handler fail (seed ${seed})`);
  t.equal(total.probesOk, total.probes, `every probe on a clean connection got the right list`);
  t.ok(total.probes > 0, 'probes were checked');
  t.ok(total.cutOff > 0 || rounds < 5, 'oversized lines were sent and cut off');
  t.ok(peak < MAX_HWM_KIB, `peak RSS ${peak} KiB stays under ${MAX_HWM_KIB} KiB`);
  t.ok(alive(pid), 'the daemon is still running');
  const c = await RootsClient.connect({ socket });
  const status = await c.status();
  await c.close();
  t.equal(status.lockdown, false, 'the fuzzer never turned lockdown on');
  t.ok(status.clients <= 2, `fuzz connections are gone (${status.clients} left)`);
});

void t.test('regressions the fuzzer found', async (t) => {
  const td = await startDaemon(t, 'version: 1\n');
  const raw = await rawConnect(td.socket);
  t.teardown(() => raw.close());

  // 1e999 is Infinity, which JSON.stringify echoes as null: the answer named no request.
  raw.send('{"jsonrpc":"2.0","id":1e999,"method":"daemon/status"}\n');
  const inf = await raw.next();
  t.equal(inf.id, null, 'an id that is not a finite number cannot be echoed');
  t.equal(
    (inf.error as { code: number }).code,
    -32600,
    'so it is an invalid request, not a result',
  );

  // realpath throws ENAMETOOLONG, not ENOENT: that was a -32603 internal error. Longer than
  // PATH_MAX, no grant can name it: refused as such before any work.
  raw.send(
    `{"jsonrpc":"2.0","id":2,"method":"grants/revoke","params":{"server":"x","path":"/${'a'.repeat(5000)}"}}\n`,
  );
  t.match(
    await raw.next(),
    { jsonrpc: '2.0', id: 2, error: { code: -32602, data: { code: 'PATH_INVALID' } } },
    'a long path is an invalid parameter',
  );
});
