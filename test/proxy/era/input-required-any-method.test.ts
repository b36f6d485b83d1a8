/**
 * A server may answer any request `input_required` and ask for roots there, not only the three
 * methods the spec names (tools/call, prompts/get, resources/read); the v2 client SDK answers
 * such a result whatever the method, with the host's own roots. The proxy follows every request
 * of the host's, in either era: it answers the server's roots requests with the policy's roots
 * (the host is never asked), and puts the policy's roots in place of the host's own in any retry.
 * Was a hole (an attacker pass): on `tools/list`, `prompts/list`, `resources/list`,
 * `resources/templates/list` and `completion/complete` the host's `file:///` reached the server.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startDaemon } from '../../helpers/daemon.js';
import { HOST_ROOT, startEraHost, type HostKind } from '../../helpers/era-host.js';
import { ownedShortDir } from '../../helpers/proxy.js';
import { initialize, startRawSession } from '../../helpers/raw-session.js';
import { fixtureServer } from '../../helpers/repo.js';

const FIXTURE = fixtureServer('any-method-roots.mjs');

/** A daemon giving server `atk` one root, `<dir>/w/in`. */
async function setup(t: Test) {
  const dir = ownedShortDir(t);
  const root = join(dir, 'w', 'in');
  mkdirSync(root, { recursive: true });
  const policy = `version: 1\nservers:\n  atk:\n    roots:\n      - path: ${root}\n`;
  const d = await startDaemon(t, policy, { dir });
  return { dir, root, socket: d.socket };
}

/** The lines the server received for `method` that carry answers to input requests. */
const retries = (lines: string[], method: string): string[] =>
  lines.filter((l) => l.includes(`"method":"${method}"`) && l.includes('"inputResponses"'));

for (const kind of ['v2-pin', 'v2-auto'] as HostKind[]) {
  void t.test(`${kind}: roots asked for in any answer are the policy's`, async (t) => {
    const { dir, root, socket } = await setup(t);
    const log = join(dir, 'received.log');
    const host = await startEraHost(t, {
      kind,
      server: 'atk',
      socket,
      serverCommand: [process.execPath, FIXTURE, log],
    });
    t.equal(host.version, '2026-07-28');
    const v2 = host.client as unknown as Record<string, (p?: unknown) => Promise<unknown>>;
    const CASES: [string, () => Promise<unknown>][] = [
      ['tools/list', () => v2.listTools!()],
      ['prompts/list', () => v2.listPrompts!()],
      ['resources/list', () => v2.listResources!()],
      ['resources/templates/list', () => v2.listResourceTemplates!()],
      [
        'completion/complete',
        () =>
          v2.complete!({
            ref: { type: 'ref/prompt', name: 'p' },
            argument: { name: 'a', value: '' },
          }),
      ],
    ];
    for (const [method, request] of CASES) {
      await t.resolves(request(), `${method} is answered`);
      const got = retries(readFileSync(log, 'utf8').split('\n'), method);
      t.ok(got.length > 0, `${method}: the server got its roots in a retry`);
      for (const l of got) {
        t.match(l, `"uri":"file://${root}"`, `${method}: the policy's roots`);
        t.notMatch(l, `"uri":"${HOST_ROOT}"`, `${method}: never the host's`);
      }
    }
    t.equal(host.hostRootsCalls(), 0, 'the host was never asked for its roots');
  });
}

void t.test("a raw host's own roots in a retry of any method are replaced", async (t) => {
  const { dir, root, socket } = await setup(t);
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'h', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': { roots: {} },
  };
  const hostRoots = { where: { roots: [{ uri: HOST_ROOT }] } };
  const METHODS = [
    'tools/list',
    'prompts/list',
    'resources/list',
    'resources/templates/list',
    'ping',
  ];
  for (const era of ['2026-07-28', '2025-06-18'] as const) {
    const s = startRawSession({ t, dir, socket, server: 'atk', fixture: FIXTURE });
    if (era === '2025-06-18') await initialize(s);
    for (const [i, method] of METHODS.entries()) {
      const params = {
        ...(era === '2026-07-28' ? { _meta: meta } : {}),
        inputResponses: hostRoots,
        requestState: 'any-method-state',
      };
      s.send({ jsonrpc: '2.0', id: 100 + i, method, params });
      const answer = await s.line(`"id":${100 + i}`);
      t.notMatch(answer, '"error"', `${era} ${method}: answered`);
      const got = retries(s.received(), method);
      t.equal(got.length, 1, `${era} ${method}: relayed once`);
      t.match(got[0], `"uri":"file://${root}"`, `${era} ${method}: with the policy's roots`);
      t.notMatch(got[0], `"uri":"${HOST_ROOT}"`, `${era} ${method}: not the host's`);
    }
    // `params: null`, which every reader takes for none: the proxy's retry holds an object
    // (written into `null`, the line was no JSON, and the request was never answered).
    s.send({ jsonrpc: '2.0', id: 300, method: 'prompts/list', params: null });
    t.notMatch(await s.line('"id":300'), '"error"', `${era} params null: answered`);
    const retry = retries(s.received(), 'prompts/list').at(-1);
    t.doesNotThrow((): unknown => JSON.parse(retry ?? ''), `${era} params null: the retry is JSON`);
    t.match(retry, `"uri":"file://${root}"`, `${era} params null: with the policy's roots`);
  }
});
