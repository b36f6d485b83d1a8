/**
 * Pushes and `roots/list` answers are put together from the kept bytes of runs of roots
 * (daemon/list-json.ts), not encoded whole. Read off the socket as bytes, every line must be
 * exactly what `JSON.stringify` gives for what it says, and after every kind of change (folders
 * made one at a time and many at once, across the runs' boundaries, renamed, removed, names
 * that need escaping or take several bytes, a policy edit renaming every root) the pushed list
 * must be byte for byte the list the same daemon answers, and in the end what a daemon started
 * fresh on the same tree answers.
 */
import { mkdirSync, renameSync, rmdirSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { shortDir, startDaemon } from '../helpers/daemon.js';

/** A connection whose lines are kept as the bytes that arrived. */
interface ByteLines {
  send(line: string): void;
  /** The next line whose text passes `pick` (earlier ones are handed to `seen`). */
  next(pick: (line: Buffer) => boolean, what: string): Promise<Buffer>;
  close(): void;
}

function connectBytes(path: string, seen: (line: Buffer) => void): Promise<ByteLines> {
  return new Promise((resolve, reject) => {
    const socket: Socket = createConnection({ path });
    const lines: Buffer[] = [];
    let wake: (() => void) | undefined;
    let pending: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => {
      let start = 0;
      for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
        pending.push(chunk.subarray(start, nl));
        lines.push(Buffer.concat(pending));
        pending = [];
        start = nl + 1;
      }
      if (start < chunk.length) pending.push(Buffer.from(chunk.subarray(start)));
      wake?.();
    });
    socket.once('error', reject);
    socket.once('connect', () =>
      resolve({
        send: (line) => socket.write(`${line}\n`),
        next: async (pick, what) => {
          const deadline = Date.now() + 30_000;
          for (;;) {
            const line = lines.shift();
            if (line !== undefined) {
              seen(line);
              if (pick(line)) return line;
              continue;
            }
            if (Date.now() > deadline) throw new Error(`no line ${what} within 30 s`);
            await new Promise<void>((r) => {
              wake = r;
              setTimeout(r, 1000);
            });
          }
        },
        close: () => socket.destroy(),
      }),
    );
  });
}

/** The bytes of the value of `"roots":` in a line (a list is the last or next-to-last member). */
function rootsBytes(line: Buffer): string {
  const value = JSON.parse(line.toString('utf8')) as {
    result?: { roots: unknown };
    params?: { roots: unknown };
  };
  const text = JSON.stringify((value.result ?? value.params)!.roots);
  const at = line.indexOf(`"roots":${text}`);
  return at < 0 ? '(not found as JSON.stringify gives it)' : text;
}

void t.test(
  'pushes and answers made from kept runs are JSON.stringify, byte for byte',
  async (t) => {
    const dir = shortDir();
    const y = join(dir, 'y');
    // Names that JSON escapes, that take two to four bytes in UTF-8, and plenty of plain ones so
    // that the list spans many runs.
    const odd = ['quo"te', 'back\\slash', 'tab\there', 'é日本', '😀', 'sp ace', 'line\u2028sep'];
    for (const name of odd) mkdirSync(join(y, name), { recursive: true });
    for (let i = 0; i < 400; i++) mkdirSync(join(y, `p${i % 7}`, `d${i}`), { recursive: true });
    const policy = (name: string) =>
      `version: 1\nservers:\n  g:\n    roots:\n      - path: ${y}/**\n${name}`;
    const live = await startDaemon(t, policy(''), { dir });

    let lines = 0;
    const exact = (line: Buffer) => {
      lines++;
      const again = Buffer.from(JSON.stringify(JSON.parse(line.toString('utf8'))), 'utf8');
      if (!again.equals(line)) t.fail(`a line is not JSON.stringify of itself: ${line.toString()}`);
    };
    const push = await connectBytes(live.socket, exact);
    const ask = await connectBytes(live.socket, exact);
    t.teardown(() => {
      push.close();
      ask.close();
    });
    let id = 0;
    const answer = async () => {
      ask.send(`{"jsonrpc":"2.0","id":${++id},"method":"roots/list","params":{"server":"g"}}`);
      return ask.next((l) => l.includes(`"id":${id},`), `answering roots/list ${id}`);
    };
    push.send(
      '{"jsonrpc":"2.0","id":0,"method":"roots/list","params":{"server":"g","subscribe":true}}',
    );
    await push.next((l) => l.includes('"id":0,'), 'answering the subscription');

    const pushed = (cond: (uris: string[]) => boolean, what: string) =>
      push.next((l) => {
        if (!l.includes('list_changed')) return false;
        const p = JSON.parse(l.toString('utf8')) as { params: { roots: { uri: string }[] } };
        return cond(p.params.roots.map((r) => r.uri));
      }, what);
    const has = (end: string) => (uris: string[]) => uris.some((u) => u.endsWith(end));
    const steps: [string, () => void, (uris: string[]) => boolean][] = [
      ['one folder made', () => mkdirSync(join(y, 'p3', 'new1')), has('/p3/new1')],
      [
        '70 folders made at once, across runs',
        () => {
          for (let i = 0; i < 70; i++) mkdirSync(join(y, `p${i % 7}`, `bulk${i}`));
        },
        has('/p6/bulk69'),
      ],
      [
        'a folder with a two-byte name',
        () => mkdirSync(join(y, 'p1', 'ñandú')),
        has('/p1/%C3%B1and%C3%BA'),
      ],
      [
        'a folder renamed',
        () => renameSync(join(y, 'p3', 'new1'), join(y, 'p3', 'new2')),
        (u) => has('/p3/new2')(u) && !has('/p3/new1')(u),
      ],
      ['a folder removed', () => rmdirSync(join(y, 'p2', 'd2')), (u) => !has('/p2/d2')(u)],
      ['an odd name removed', () => rmdirSync(join(y, 'quo"te')), (u) => !has('/quo%22te')(u)],
    ];
    for (const [what, change, done] of steps) {
      change();
      const line = await pushed(done, `pushing after: ${what}`);
      const listed = await answer();
      t.equal(rootsBytes(line), rootsBytes(listed), `${what}: the push is the list answered`);
    }
    // Every root's name changes: no kept run can be reused.
    live.writePolicy(policy('        name: "x {base}"\n'));
    const renamed = await push.next(
      (l) => l.includes('list_changed') && l.includes('"name":"x '),
      'pushing after the policy edit',
    );
    t.equal(
      rootsBytes(renamed),
      rootsBytes(await answer()),
      'renamed: the push is the list answered',
    );

    const fresh = await startDaemon(t, undefined, { configFile: live.config });
    const freshAsk = await connectBytes(fresh.socket, exact);
    t.teardown(() => freshAsk.close());
    freshAsk.send('{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"server":"g"}}');
    const freshList = await freshAsk.next((l) => l.includes('"id":1,'), 'the fresh answer');
    t.equal(
      rootsBytes(await answer()),
      rootsBytes(freshList),
      'the live list is the fresh daemon’s',
    );
    t.ok(lines > 10, `${lines} lines read, each JSON.stringify of itself`);
  },
);
