/** The proxy in a 2026-07-28 session: roots/list input requests are the proxy's, never the host's. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t, { type Test as Tap } from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';
import { startRawSession, type RawSession } from '../helpers/raw-session.js';
import { fixtureServer } from '../helpers/repo.js';

const FIXTURE = fixtureServer('revision-2026.mjs');

const CAPS_KEY = 'io.modelcontextprotocol/clientCapabilities';
const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const RETRY_PREFIX = 'mcp-roots-proxy:retry-';

/** A message the proxy wrote to the host, as this test reads it. */
interface Msg {
  id?: unknown;
  jsonrpc?: string;
  result?: {
    resultType?: string;
    inputRequests?: Record<string, unknown>;
    requestState?: string;
    content?: { type: string; text: string }[];
    isError?: boolean;
  };
  error?: { code: number; message: string };
}

/** What the fixture server echoes in a final result. */
interface Echo {
  inputResponses: unknown;
  requestState?: string;
  meta?: unknown;
}

interface Session extends RawSession {
  /** The host's answer with this id, waiting for it. */
  answer(id: number, ms?: number): Promise<Msg>;
}

function start(t: Tap, dir: string, socket: string): Session {
  const s = startRawSession({ t, dir, socket, server: 'next', fixture: FIXTURE });
  const find = (id: number) =>
    s
      .hostLines()
      .map((l) => JSON.parse(l) as Msg)
      .find((m) => m.id === id);
  return {
    ...s,
    async answer(id, ms = 30_000) {
      await waitFor(() => find(id) !== undefined, ms, `the answer to ${id}\n${s.stderr()}`);
      return find(id)!;
    },
  };
}

/** A 2026-07-28 tools/call: capabilities in `_meta`, no initialize before it. */
function call(id: number, name: string, extra: Record<string, unknown> = {}): object {
  return {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name,
      arguments: {},
      _meta: { [VERSION_KEY]: '2026-07-28', [CAPS_KEY]: { roots: {}, elicitation: {} } },
      ...extra,
    },
  };
}

/** What the fixture echoed back in a final result. */
function echoed(answer: Msg): Echo {
  return JSON.parse(answer.result!.content![0]!.text) as Echo;
}

void t.test(
  'a 2026-07-28 session: roots/list input requests are answered by the proxy',
  async (t) => {
    const dir = ownedShortDir(t);
    const w = join(dir, 'w');
    mkdirSync(join(w, 'in'), { recursive: true });
    mkdirSync(join(w, 'ro'));
    const policy = `version: 1
servers:
  next:
    roots:
      - path: ${w}/in
        name: inside
      - path: ${w}/ro
        readOnly: true
`;
    const d = await startDaemon(t, policy, { dir });
    const { roots: policyRoots } = await (await d.connect()).listRoots('next');
    t.same(
      policyRoots.map((r) => r.uri),
      [pathToFileURL(`${w}/in`).href, pathToFileURL(`${w}/ro`).href],
      'the policy’s list, as the daemon gives it',
    );
    const policyAnswer = { roots: policyRoots };
    const hostRoots = { roots: [{ uri: 'file:///', name: 'the host would give everything' }] };

    const s = start(t, dir, d.socket);
    // The proxy answers from the list it knows; a request sent before it knows any would race.
    await waitFor(() => s.stderr().includes('connected to mcp-rootsd'), 30_000, 'the daemon link');

    await t.test('only roots/list asked: the proxy retries by itself', async (t) => {
      const first = call(1, 'roots');
      s.send(first);
      const answer = await s.answer(1);
      t.notOk('resultType' in answer.result!, 'the host gets the final result, not input_required');
      const echo = echoed(answer);
      t.same(echo.inputResponses, { roots: policyAnswer }, 'the server got the policy’s roots');
      t.equal(echo.requestState, 'state-roots', 'the retry carries the server’s requestState');
      t.same(
        echo.meta,
        { [VERSION_KEY]: '2026-07-28', [CAPS_KEY]: { roots: {}, elicitation: {} } },
        'the retry keeps the host’s _meta',
      );

      const got = s.received().filter((l) => (JSON.parse(l) as { id?: unknown }).id === 1);
      t.equal(got.length, 1, 'the server saw the request under the host’s id once');
      t.equal(got[0], JSON.stringify(first), 'the request is relayed byte for byte');
      const retries = s
        .received()
        .map((l) => JSON.parse(l) as { id?: unknown })
        .filter((m) => typeof m.id === 'string' && m.id.startsWith(RETRY_PREFIX));
      t.equal(retries.length, 1, 'and one retry, under a fresh id (basic/patterns/mrtr)');
      const expected = JSON.parse(JSON.stringify(first));
      expected.id = retries[0]!.id;
      expected.params.inputResponses = { roots: policyAnswer };
      expected.params.requestState = 'state-roots';
      t.same(
        retries[0],
        expected,
        'the retry is the host’s request with inputResponses and requestState',
      );
      t.equal(answer.id, 1, 'the host gets the answer under its own id');

      t.notOk(
        s.hostLines().some((l) => /roots\/list|inputRequests|input_required/.test(l)),
        'the host never sees the roots/list input request',
      );
    });

    await t.test('roots/list and elicitation: the host answers only its own', async (t) => {
      s.send(call(2, 'mixed'));
      const answer = await s.answer(2);
      t.same(
        answer.result,
        {
          resultType: 'input_required',
          inputRequests: {
            confirm: {
              method: 'elicitation/create',
              params: {
                message: 'Go on?',
                requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
              },
            },
          },
          requestState: 'state-mixed',
        },
        'the host sees the elicitation, without the roots/list entry',
      );
      t.notOk(
        s.hostLines().some((l) => l.includes('roots/list')),
        'roots/list never reaches the host',
      );
      t.equal(
        s.received().filter((l) => l.includes('"id":2,')).length,
        1,
        'the proxy did not retry by itself: the host still owes an answer',
      );

      const confirm = { action: 'accept', content: { ok: true } };
      s.send(
        call(3, 'mixed', {
          inputResponses: { confirm },
          requestState: answer.result?.requestState,
        }),
      );
      const echo = echoed(await s.answer(3));
      t.same(
        echo.inputResponses,
        { confirm, roots: policyAnswer },
        'the server gets the host’s answer and the proxy’s roots',
      );
      t.equal(echo.requestState, 'state-mixed');
    });

    await t.test('an input request under the key __proto__ reaches the host', async (t) => {
      s.send(call(20, 'proto'));
      const line = await s.line('"id":20', 10_000);
      t.match(
        line,
        '"inputRequests":{"__proto__":{"method":"elicitation/create"',
        'the host sees the elicitation under its key, without the roots/list entry',
      );
    });

    await t.test('the host cannot answer roots/list in the proxy’s place', async (t) => {
      const confirm = { action: 'accept', content: { ok: true } };

      // The key the proxy took away from the host's InputRequiredResult.
      s.send(call(4, 'mixed'));
      const asked = await s.answer(4);
      t.same(Object.keys(asked.result?.inputRequests ?? {}), ['confirm']);
      s.send(
        call(5, 'mixed', {
          inputResponses: { roots: hostRoots, confirm },
          requestState: asked.result?.requestState,
        }),
      );
      t.same(
        echoed(await s.answer(5)).inputResponses,
        { roots: policyAnswer, confirm },
        'on the retry, the proxy’s answer replaces the host’s',
      );

      // Nothing owed: the host answers a roots/list nobody showed it, hoping the server takes it.
      s.send(
        call(6, 'roots', { inputResponses: { roots: hostRoots }, requestState: 'state-roots' }),
      );
      t.same(
        echoed(await s.answer(6)).inputResponses,
        { roots: policyAnswer },
        'an unasked roots answer under a key the proxy answered is replaced',
      );
      s.send(
        call(7, 'roots', {
          inputResponses: { guessed: hostRoots, confirm },
          requestState: 'state-roots',
        }),
      );
      t.same(
        echoed(await s.answer(7)).inputResponses,
        { guessed: policyAnswer, confirm },
        'so is one under a key the proxy has never seen',
      );

      // A second retry of an answered request: the roots answer was already given once.
      s.send(call(8, 'mixed', { inputResponses: { roots: hostRoots, confirm } }));
      t.same(
        echoed(await s.answer(8)).inputResponses,
        { roots: policyAnswer, confirm },
        'a replayed retry gets the policy’s roots too',
      );

      t.notOk(
        s.received().some((l) => l.includes('the host would give everything')),
        'the host’s roots never reach the server',
      );
    });

    await t.test('enforcement applies without initialize', async (t) => {
      s.send(call(9, 'roots', { arguments: { path: `${w}/elsewhere/x` } }));
      const answer = await s.answer(9);
      t.equal(answer.result?.isError, true, 'a path outside the roots is refused');
      t.match(
        answer.result?.content?.[0]?.text,
        `mcp-roots-proxy refused roots on ${w}/elsewhere/x`,
      );
      t.notOk(
        s.received().some((l) => l.includes('"id":9,')),
        'the refused call never reaches the server',
      );
      const own = s.received().find((l) => l.includes('"method":"tools/list"'));
      t.ok(own, 'the proxy listed the tools before the call, without any handshake');
      t.same(
        (JSON.parse(own!) as { params: { _meta: unknown } }).params._meta,
        { [VERSION_KEY]: '2026-07-28', [CAPS_KEY]: { roots: {}, elicitation: {} } },
        'with the envelope of the host’s latest request',
      );
      t.equal(answer.result?.resultType, 'complete', 'the refusal is a 2026-07-28 result');
    });

    await t.test(
      'a server that asks for roots again and again gets three answers, not a loop',
      async (t) => {
        s.send(call(11, 'again'));
        const answer = await s.answer(11);
        t.equal(answer.result?.isError, true, 'the host gets a tool error');
        t.equal(answer.result?.resultType, 'complete', 'a 2026-07-28 result');
        t.match(
          answer.result?.content?.[0]?.text,
          /asked for roots\/list 4 times for one tools\/call/,
        );
      },
    );

    await t.test('a retry carries no requestState the server did not send', async (t) => {
      const confirm = { action: 'accept', content: { ok: true } };
      s.send(call(12, 'nostate', { inputResponses: { confirm }, requestState: 'stale' }));
      const echo = echoed(await s.answer(12));
      t.same(echo.inputResponses, { roots: policyAnswer }, 'this round’s answers only');
      t.equal(echo.requestState, undefined, 'the stale requestState is dropped');
    });

    await t.test('the roots capability the server sees is the policy’s', async (t) => {
      s.send({
        jsonrpc: '2.0',
        id: 13,
        method: 'prompts/list',
        params: { _meta: { [VERSION_KEY]: '2026-07-28', [CAPS_KEY]: { elicitation: {} } } },
      });
      await s.answer(13);
      const seen = s.received().find((l) => l.includes('"id":13,'));
      t.same(
        (JSON.parse(seen!) as { params: { _meta: Record<string, unknown> } }).params._meta[
          CAPS_KEY
        ],
        { elicitation: {}, roots: {} },
        'roots added: the policy gives this server roots',
      );
    });

    await t.test('the server dies during the proxy’s own retry', async (t) => {
      s.send(call(10, 'exit'));
      const answer = await s.answer(10);
      t.equal(answer.error?.code, -32603, 'the host gets an error instead of waiting for ever');
      t.match(answer.error?.message, /no answer to tools\/call/);
      t.equal(await s.exit, 5, 'the proxy exits with the server’s status');
    });

    for (const line of s.hostLines())
      t.equal((JSON.parse(line) as { jsonrpc?: string }).jsonrpc, '2.0');
  },
);
