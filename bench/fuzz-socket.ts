/**
 * The long socket-fuzzing run. Starts the built daemon as a child, runs fuzz rounds
 * (FUZZ_CONNECTIONS connections at once, FUZZ_MESSAGES payloads each) for FUZZ_SECONDS seconds
 * or FUZZ_ROUNDS rounds, checks the daemon after every round (alive, `roots/list` exact), and
 * reports messages, connections, crashes and peak memory. FUZZ_SEED replays a run.
 *
 *   npm run build && FUZZ_SECONDS=120 node dist/bench/fuzz-socket.js
 */
import { realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { RootsClient } from '../protocol/client.js';
import { fuzzSeed, Rng } from './fuzz-rng.js';
import {
  addStats,
  alive,
  CHECKED_SERVER,
  emptyStats,
  fuzzRound,
  memoryKiB,
  writeFuzzTarget,
} from './fuzz-engine.js';
import { report, startDaemon, tempDir } from './common.js';

const SECONDS = Number(process.env.FUZZ_SECONDS ?? 120);
const ROUNDS = Number(process.env.FUZZ_ROUNDS ?? Infinity);
const CONNECTIONS = Number(process.env.FUZZ_CONNECTIONS ?? 20);
const MESSAGES = Number(process.env.FUZZ_MESSAGES ?? 12);
/** Peak resident memory allowed, in MiB. */
const MAX_PEAK_MIB = Number(process.env.FUZZ_MAX_PEAK_MIB ?? 512);

async function listOf(socket: string): Promise<string> {
  const c = await RootsClient.connect({ socket, timeoutMs: 10_000 });
  try {
    return JSON.stringify((await c.listRoots(CHECKED_SERVER)).roots);
  } finally {
    await c.close();
  }
}

async function main(): Promise<boolean> {
  const seed = fuzzSeed();
  process.stdout.write(`fuzz-socket: seed ${seed} (replay with FUZZ_SEED=${seed})\n`);
  const dir = realpathSync(tempDir());
  const { config, socket } = writeFuzzTarget(dir);
  // Error level: the fuzzer's harmless `lockdown off` requests would fill the terminal with warnings.
  const child = await startDaemon({
    config,
    socket,
    stateDir: join(dir, 'state'),
    extra: ['--log-level', 'error'],
  });
  const pid = child.pid!;
  let crashes = 0;
  let exit = '';
  let stopping = false;
  child.once('exit', (code, signal) => {
    if (stopping) return;
    crashes++;
    exit = `code ${code} signal ${signal}`;
  });
  const expected = await listOf(socket);
  const rng = new Rng(seed);
  const total = emptyStats();
  const started = Date.now();
  const deadline = started + SECONDS * 1000;
  let rounds = 0;
  let peakKiB = 0;
  let wrongLists = 0;
  let lastReport = started;
  while (rounds < ROUNDS && Date.now() < deadline && crashes === 0) {
    addStats(
      total,
      await fuzzRound({
        socket,
        rng,
        connections: CONNECTIONS,
        messages: MESSAGES,
        expected,
        round: rounds,
      }),
    );
    rounds++;
    if (!alive(pid)) break;
    peakKiB = Math.max(peakKiB, memoryKiB(pid).hwm);
    if ((await listOf(socket)) !== expected) wrongLists++;
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      const { rss } = memoryKiB(pid);
      process.stdout.write(
        `  ${Math.round((lastReport - started) / 1000)} s: ${rounds} rounds, ${total.messages} messages, RSS ${Math.round(rss / 1024)} MiB\n`,
      );
    }
  }
  const finalRss = alive(pid) ? memoryKiB(pid).rss : 0;
  stopping = true;
  if (alive(pid)) child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 200));
  rmSync(dir, { recursive: true, force: true });
  return report(
    'fuzz-socket',
    {
      seed,
      seconds: Math.round((Date.now() - started) / 1000),
      rounds,
      messages: total.messages,
      mib: Math.round(total.bytes / 1024 / 1024),
      connections: total.connections,
      answers: total.answers,
      cutOff: total.cutOff,
      probes: `${total.probesOk}/${total.probes}`,
      crashes,
      ...(exit !== '' ? { exit } : {}),
      peakRssMiB: Math.round(peakKiB / 1024),
      finalRssMiB: Math.round(finalRss / 1024),
      malformed: total.malformed.slice(0, 3),
      internalErrors: total.internalErrors.slice(0, 3),
    },
    [
      ['crashes: 0', crashes === 0],
      ['roots/list exact after every round', wrongLists === 0],
      ['every probe on a clean connection answered exactly', total.probesOk === total.probes],
      ['every line from the daemon well-formed', total.malformed.length === 0],
      ['no internal errors', total.internalErrors.length === 0],
      [`peak RSS under ${MAX_PEAK_MIB} MiB`, peakKiB / 1024 < MAX_PEAK_MIB],
    ],
  );
}

process.exitCode = (await main()) ? 0 : 1;
