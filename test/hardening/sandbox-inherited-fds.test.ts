/**
 * What the proxy's starter hands it beyond a pipe for each stdio stream: descriptors left open,
 * and a stderr that is a file. Descriptors left open by whatever starts the proxy. A host, a shell or a launcher that leaves
 * one open without close-on-exec hands it to the proxy, and the proxy to every program it starts:
 * in a sandbox, one open on a directory outside the roots gave the server that directory, and
 * through `..` the whole filesystem, whatever bwrap mounted. The proxy now closes them at its
 * start, and the sandbox's gate refuses to start a server that would still hold one.
 * Real daemon, real proxy, real bwrap; the descriptors are put in place by the spawn, at 30 and 40
 * (numbers the gate's shell could not close: dash takes single digits only). Whatever else this
 * test's own starter left open is closed too, and said beside them.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER } from '../helpers/proxied-server.js';
import { ownedShortDir, proxyFor, waitFor } from '../helpers/proxy.js';
import { FIXTURES } from '../helpers/repo.js';

const SECRET = 'MARK-OUTSIDE-EVERY-ROOT';
const LEFT_OPEN = [30, 40];

/** The proxy for `server` in front of the hostile server, with LEFT_OPEN open on `secret`. */
function startWithOpenDirectory(
  t: Test,
  socket: string,
  server: string,
  secret: string,
  proxyScript?: string,
  stderrFile?: string,
) {
  const cmd = proxyFor({ server, socket, extra: ['--no-enforce'] }, [
    process.execPath,
    HOSTILE_SERVER,
  ]);
  if (proxyScript !== undefined) cmd.args[0] = proxyScript;
  const fd = openSync(secret, 'r');
  const errFd = stderrFile === undefined ? undefined : openSync(stderrFile, 'a');
  const stdio: ('pipe' | 'ignore' | number)[] = ['pipe', 'pipe', errFd ?? 'pipe'];
  for (let n = 3; n <= Math.max(...LEFT_OPEN); n++)
    stdio.push(LEFT_OPEN.includes(n) ? fd : 'ignore');
  const child = spawn(cmd.command, cmd.args, { env: cmd.env, stdio });
  closeSync(fd);
  if (errFd !== undefined) closeSync(errFd);
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const lines: string[] = [];
  let stderr = '';
  let pending = '';
  child.stdout!.on('data', (b: Buffer) => {
    const parts = (pending + b.toString()).split('\n');
    pending = parts.pop()!;
    lines.push(...parts);
  });
  child.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  const send = (msg: object) => child.stdin!.write(`${JSON.stringify(msg)}\n`);
  const answer = async (id: number) => {
    let found: string | undefined;
    await waitFor(
      () => (found = lines.find((l) => l.includes(`"id":${id},`))) !== undefined,
      30_000,
      `an answer to ${id}\n${stderr}`,
    );
    return JSON.parse(found!) as { result?: { content: { text: string }[] }; error?: unknown };
  };
  const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { send, answer, exit, end: () => child.stdin!.end(), stderr: () => stderr };
}

/** A policy with `boxed` (sandboxed) and `plain`, both on `<dir>/root`, and a secret outside. */
async function setUp(t: Test) {
  const dir = realpathSync(ownedShortDir(t));
  mkdirSync(join(dir, 'root'));
  const secret = join(dir, 'secret');
  mkdirSync(secret);
  writeFileSync(join(secret, 'key.txt'), SECRET);
  const root = `[{path: ${dir}/root}]`;
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  boxed:\n    roots: ${root}\n    sandbox: true\n  plain:\n    roots: ${root}\n`,
    { dir },
  );
  return { d, secret };
}

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 't', version: '0' },
  },
};

/** A call of the hostile server's tool that runs `command` in its own shell. */
const shellCall = (id: number, command: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'attempt', arguments: { action: 'shell', ref: command } },
});

/** The server's own shell, reading the secret through each left-open descriptor. */
const THROUGH_FDS = shellCall(
  2,
  LEFT_OPEN.map((n) => `cat /proc/self/fd/${n}/key.txt /proc/self/fd/${n}/../secret/key.txt`).join(
    '; ',
  ),
);

for (const server of ['boxed', 'plain']) {
  void t.test(`a ${server} server gets none of them`, async (t) => {
    const { d, secret } = await setUp(t);
    const p = startWithOpenDirectory(t, d.socket, server, secret);
    p.send(INIT);
    t.ok((await p.answer(1)).result, 'the server starts');
    p.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    p.send(THROUGH_FDS);
    const text = (await p.answer(2)).result!.content[0]!.text;
    t.match(text, /^ok: status [1-9]/, 'the shell ran, and failed');
    t.notMatch(text, SECRET, 'the directory outside every root is out of reach');
    t.match(
      p.stderr(),
      /closed descriptors (?:\d+, )*30, 40(?:, \d+)*, left open by whatever started the proxy/,
      'the proxy says what it closed',
    );
  });
}

void t.test('a descriptor the proxy kept stops the sandbox at its gate', async (t) => {
  const { d, secret } = await setUp(t);
  const p = startWithOpenDirectory(
    t,
    d.socket,
    'boxed',
    secret,
    join(FIXTURES, 'proxy', 'keeping-fds.mjs'),
  );
  p.send(INIT);
  t.ok((await p.answer(1)).error, 'the host is answered that the server could not start');
  p.end();
  t.equal(await p.exit, 126, 'the proxy ends as for a server that cannot start');
  t.match(
    p.stderr(),
    /the sandbox was stopped before the server started: the sandbox would hold more than it mounts: descriptors (?:\d+, )*30, 40(?:, \d+)* would pass into the sandbox/,
    'the gate saw them, and the proxy said no',
  );
});

void t.test('a stderr that is a file is not the sandboxed server’s to open', async (t) => {
  // A descriptor of a file lets whoever holds it open the file anew, through /proc/self/fd/2, to
  // read and write: a host that logs a server's stderr to a file gave the server that file (and
  // what other servers had logged there). A sandboxed server's stderr is a pipe to the proxy.
  const { d, secret } = await setUp(t);
  const log = join(secret, 'host.log');
  writeFileSync(log, `${SECRET} in the host's log\n`);
  const p = startWithOpenDirectory(t, d.socket, 'boxed', secret, undefined, log);
  p.send(INIT);
  t.ok((await p.answer(1)).result, 'the server starts');
  p.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  p.send(
    shellCall(
      2,
      'cat /proc/self/fd/2 /proc/1/fd/2 </dev/null & sleep 0.2; kill $! 2>/dev/null; ls -l /proc/$PPID/fd/2 /proc/1/fd/2',
    ),
  );
  const text = (await p.answer(2)).result!.content[0]!.text;
  t.notMatch(text, SECRET, 'the log’s earlier lines are out of reach');
  t.notMatch(text, 'host.log', 'no descriptor in the sandbox is the log');
  // The server's own stderr still reaches the proxy's: the proxy copies it there.
  p.send({
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: { name: 'attempt', arguments: { action: 'write-later', ref: '/tmp/later', to: '10' } },
  });
  await p.answer(3);
  await waitFor(
    () => readFileSync(log, 'utf8').includes('hostile: later write /tmp/later: ok'),
    10_000,
    'the server’s stderr in the log',
  );
  t.match(readFileSync(log, 'utf8'), `${SECRET} in the host's log\n`, 'the log is intact');
});

void t.test('a sandboxed server’s last stderr reaches a host that reads it late', async (t) => {
  // The proxy copies the server's stderr: what a host has not read yet when the server exits is
  // still the host's, not dropped with the proxy's exit, nor held in the proxy's memory.
  const { d, secret } = await setUp(t);
  // Outside the roots: in `plain`'s writable root, another server could write it, and it would
  // not be started (sandbox-other-writers.test.ts).
  mkdirSync(join(secret, '..', 'prog'));
  const program = join(secret, '..', 'prog', 'loud.mjs');
  writeFileSync(
    program,
    "process.stderr.write('x'.repeat(1 << 20) + 'END-OF-STDERR\\n', () => process.exit(0));\n",
  );
  const cmd = proxyFor({ server: 'boxed', socket: d.socket }, [process.execPath, program]);
  const child = spawn(cmd.command, cmd.args, { env: cmd.env, stdio: ['pipe', 'ignore', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
  await new Promise((resolve) => setTimeout(resolve, 1500));
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  await closed;
  t.match(stderr, /x{1000}END-OF-STDERR\n/, 'every byte, the last line too');
});
