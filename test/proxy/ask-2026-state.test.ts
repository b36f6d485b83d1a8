/**
 * The proxy's question in a 2026-07-28 call beside the server's own input requests, and the
 * `requestState` the host echoes taken for what it is: text anyone on the host's side can write.
 * A forged state, a replayed one, one used for another call or in another session is refused
 * with an error, and never grants anything.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t, { type Test } from 'tap';
import { startAskHost, type ElicitAnswer, type ElicitParams } from '../helpers/ask-host.js';
import { askPerson, startAskDaemon } from '../helpers/ask-setup.js';
import { waitFor } from '../helpers/proxy.js';
import { fixtureServer } from '../helpers/repo.js';

const FIXTURE = fixtureServer('v2-ask.mjs');
const ASK_KEY = 'mcp-roots-proxy/ask';
const ACCEPT_DIR: ElicitAnswer = {
  action: 'accept',
  content: { scope: 'directory', duration: '10m', readOnly: false },
};

void t.test('the proxy’s question in a 2026-07-28 call, and its requestState', async (t) => {
  const outs = ['in', 'out1', 'out2', 'out3', 'out4', 'out5', 'out6', 'out7', 'out8'];
  const { w, d, admin } = await startAskDaemon(
    t,
    Object.fromEntries(outs.map((sub) => [`${sub}/f.txt`, sub])),
    (w) => `version: 1\nask: true\nservers:\n  v2:\n    roots:\n      - path: ${w}/in\n`,
  );
  const uri = (d: string) => pathToFileURL(join(w, d, 'f.txt')).href;
  const granted = async (sub: string) =>
    (await admin.grants()).grants.some((g) => g.path === join(w, sub));

  // The person allows the directory; the server's own question is answered yes.
  const person = askPerson<ElicitParams, ElicitAnswer>((p) =>
    p.message.startsWith('mcp-roots:') ? ACCEPT_DIR : { action: 'accept', content: { ok: true } },
  );
  const { asked } = person;
  const auto = await startAskHost(t, {
    server: 'v2',
    socket: d.socket,
    serverCommand: [process.execPath, FIXTURE],
    elicit: person.elicit,
  });
  const manual = await startAskHost(t, {
    server: 'v2',
    socket: d.socket,
    serverCommand: [process.execPath, FIXTURE],
    manual: true,
    elicit: () => Promise.reject(new Error('the manual host answers nothing itself')),
  });

  /** Ask about `sub` and return the proxy's state (the call answered input_required). */
  const question = async (t: Test, sub: string): Promise<string> => {
    const r = await manual.callRaw({ name: 'confirm_read', arguments: { location: uri(sub) } });
    t.equal(r.resultType, 'input_required', `${sub}: the call is answered with a question`);
    const inputs = r.inputRequests as Record<string, { method: string; params: ElicitParams }>;
    t.same(Object.keys(inputs), [ASK_KEY], `${sub}: the proxy’s question alone`);
    t.equal(inputs[ASK_KEY]!.method, 'elicitation/create');
    t.match(inputs[ASK_KEY]!.params.message, JSON.stringify(join(w, sub, 'f.txt')));
    t.type(r.requestState, 'string');
    return r.requestState as string;
  };
  const retry = (sub: string, requestState: string) =>
    manual.callRaw({
      name: 'confirm_read',
      arguments: { location: uri(sub) },
      inputResponses: { [ASK_KEY]: ACCEPT_DIR },
      requestState,
    });

  await t.test('the proxy’s question and the server’s own, in one call', async (t) => {
    const r = await auto.call('confirm_read', { location: uri('out1') });
    t.equal(r.isError, false, r.text);
    const got = JSON.parse(r.text) as { roots: string[]; confirm: unknown; seen: string[] };
    t.ok(got.roots.includes(pathToFileURL(join(w, 'out1')).href), 'the server got the grant');
    t.same(got.confirm, { action: 'accept', content: { ok: true } }, 'its own question answered');
    t.same(got.seen, ['confirm', 'where'], 'the proxy’s question and answer never reached it');
    t.equal(asked.length, 2, 'the person saw two questions');
    t.match(asked[0]!.message, /^mcp-roots:/, 'the proxy’s first');
    t.ok(await granted('out1'));
  });

  await t.test('an accepted retry goes on; the same state again is refused', async (t) => {
    const state = await question(t, 'out2');
    const r = await retry('out2', state);
    // The call went on to the server, which asks its own question.
    t.equal(r.resultType, 'input_required');
    t.same(Object.keys(r.inputRequests as object), ['confirm'], 'the server’s question now');
    t.ok(await granted('out2'), 'the answer granted the directory');
    for (const sub of ['out2', 'out3']) {
      await t.rejects(retry(sub, state), /answered or expired already/, `replayed for ${sub}`);
    }
    t.notOk(await granted('out3'), 'a replay grants nothing');
  });

  await t.test('a retry whose arguments come in another order is the same call', async (t) => {
    // A host that parses the call and writes it again may reorder its members.
    const r = await manual.callRaw({
      name: 'confirm_read',
      arguments: { location: uri('out8'), note: 'n' },
    });
    t.equal(r.resultType, 'input_required');
    const again = await manual.callRaw({
      name: 'confirm_read',
      arguments: { note: 'n', location: uri('out8') },
      inputResponses: { [ASK_KEY]: ACCEPT_DIR },
      requestState: r.requestState,
    });
    t.same(Object.keys(again.inputRequests as object), ['confirm'], 'it went on to the server');
    t.ok(await granted('out8'), 'the person’s answer granted the directory');
  });

  await t.test('forged states are refused and grant nothing', async (t) => {
    const forged = [
      'mcp-roots-proxy/ask:',
      'mcp-roots-proxy/ask:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      `mcp-roots-proxy/ask:${'x'.repeat(10_000)}`,
      'mcp-roots-proxy/ask:{"path":"/","readOnly":false}',
    ];
    for (const state of forged) {
      await t.rejects(retry('out3', state), /not one mcp-roots-proxy issued/, state.slice(0, 40));
    }
    t.notOk(await granted('out3'));
  });

  await t.test('a state used for another call is refused', async (t) => {
    const state = await question(t, 'out4');
    await t.rejects(retry('out5', state), /issued for another call/);
    await t.rejects(retry('out4', state), /answered or expired already/, 'and it is spent');
    t.notOk(await granted('out4'));
    t.notOk(await granted('out5'));
  });

  await t.test('a state from another session is unknown there', async (t) => {
    const state = await question(t, 'out6');
    const other = await auto.client
      .callTool(
        {
          name: 'confirm_read',
          arguments: { location: uri('out6') },
          inputResponses: { [ASK_KEY]: ACCEPT_DIR },
          requestState: state,
        } as never,
        { timeout: 120_000 },
      )
      .then(
        () => 'answered',
        (err: Error) => err.message,
      );
    t.match(other, /not one mcp-roots-proxy issued/);
    t.notOk(await granted('out6'));
    // The question about out6 is still open there: one question per server at a time. A call
    // about out5 waits for its answer, then asks its own.
    const waiting = manual.callRaw({
      name: 'confirm_read',
      arguments: { location: uri('out5') },
    });
    const answered = await retry('out6', state);
    t.notOk(answered.isError, 'the open question answered in its own session goes on');
    t.ok(await granted('out6'));
    const next = await waiting;
    t.equal(next.resultType, 'input_required', 'the waiting call is asked about next');
    const inputs = next.inputRequests as Record<string, { params: ElicitParams }>;
    t.match(inputs[ASK_KEY]!.params.message, JSON.stringify(join(w, 'out5', 'f.txt')));
  });

  await t.test('a question nobody answers expires, and is not asked again at once', async (t) => {
    const late = await startAskHost(t, {
      server: 'v2',
      socket: d.socket,
      serverCommand: [process.execPath, FIXTURE],
      manual: true,
      proxyArgs: ['--ask-timeout', '1'],
      elicit: () => Promise.reject(new Error('the manual host answers nothing itself')),
    });
    const r = await late.callRaw({ name: 'confirm_read', arguments: { location: uri('out7') } });
    t.equal(r.resultType, 'input_required');
    const log = join(d.stateDir, 'decisions.jsonl');
    const expired = () =>
      readFileSync(log, 'utf8')
        .split('\n')
        .some((l) => l.includes('"kind":"ask"') && l.includes('out7') && l.includes('"timeout"'));
    await waitFor(expired, 30_000, 'the ask recorded as unanswered');
    await t.rejects(
      late.callRaw({
        name: 'confirm_read',
        arguments: { location: uri('out7') },
        inputResponses: { [ASK_KEY]: ACCEPT_DIR },
        requestState: r.requestState,
      }),
      /answered or expired already/,
    );
    const again = await late.callRaw({
      name: 'confirm_read',
      arguments: { location: uri('out7') },
    });
    t.equal(again.isError, true);
    t.match(JSON.stringify(again.content), 'not asked again before');
    t.notOk(await granted('out7'));
  });
});
