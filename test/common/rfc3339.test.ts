/**
 * One RFC 3339 grammar at every door: the function itself, a policy file, `rootsctl grant
 * --until`, a raw `grants/add` on the socket, and the grants file the daemon loads. A date that
 * does not exist (30 February) is refused at each, where `Date.parse` would roll it into March.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parseRfc3339 } from '../../common/rfc3339.js';
import { parsePolicyText } from '../../policies/index.js';
import { RpcCode } from '../../protocol/rpc-errors.js';
import { rootsctl } from '../helpers/cli.js';
import { shortDir, startDaemon } from '../helpers/daemon.js';
import { rawConnect } from '../helpers/raw.js';

/** Dates of the right shape that name no instant: each door must refuse every one. */
const IMPOSSIBLE = [
  '2026-02-30T00:00:00Z',
  '2026-02-29T12:00:00Z',
  '2100-02-29T00:00:00Z',
  '2026-04-31T00:00:00Z',
  '2026-06-31T00:00:00+02:00',
  '2026-00-10T00:00:00Z',
  '2026-12-00T00:00:00Z',
  '2026-12-31T24:00:00Z',
  '2026-12-31T18:60:00Z',
  '2026-12-31T18:00:00+24:00',
];

/** Not RFC 3339 with a zone at all. */
const MALFORMED = [
  '2026-12-31T18:00:00',
  '2026-12-31',
  '2026-12-31 18:00:00Z',
  '2026-12-31T18:00Z',
  '2026-12-31T18:00:00+01',
  '2026-12-31T18:00:00+0100',
  'tomorrow',
  '',
];

void t.test('parseRfc3339: instants, and undefined for every impossible or malformed one', (t) => {
  const rows: [string, number][] = [
    ['2026-12-31T18:00:00Z', Date.UTC(2026, 11, 31, 18)],
    ['2026-12-31t18:00:00z', Date.UTC(2026, 11, 31, 18)],
    ['2026-12-31T18:00:00.25Z', Date.UTC(2026, 11, 31, 18, 0, 0, 250)],
    ['2026-12-31T18:00:00.123456+00:00', Date.UTC(2026, 11, 31, 18, 0, 0, 123)],
    ['2026-12-31T18:00:00+01:00', Date.UTC(2026, 11, 31, 17)],
    ['2026-12-31T18:00:00-05:30', Date.UTC(2026, 11, 31, 23, 30)],
    ['2028-02-29T00:00:00Z', Date.UTC(2028, 1, 29)],
    ['2000-02-29T00:00:00Z', Date.UTC(2000, 1, 29)],
    ['2026-04-30T00:00:00Z', Date.UTC(2026, 3, 30)],
    ['0050-01-01T00:00:00Z', -60589296000000],
  ];
  for (const [s, ms] of rows) t.equal(parseRfc3339(s), ms, s);
  for (const s of [...IMPOSSIBLE, ...MALFORMED]) t.equal(parseRfc3339(s), undefined, s);
  t.end();
});

void t.test('door 1: a policy file refuses an impossible expires', (t) => {
  for (const when of IMPOSSIBLE) {
    const yaml = `version: 1\nservers:\n  fs:\n    roots:\n      - {path: /tmp, expires: "${when}"}\n`;
    const parsed = parsePolicyText(Buffer.from(yaml), '/p.yaml');
    t.match(
      parsed.errors,
      [{ line: 5, message: `"${when}" is not an RFC 3339 date-time with a zone` }],
      when,
    );
  }
  t.end();
});

void t.test(
  'door 2: rootsctl grant --until refuses an impossible date before connecting',
  async (t) => {
    const dir = shortDir();
    const env = { HOME: dir, XDG_RUNTIME_DIR: join(dir, 'run') };
    for (const when of [...IMPOSSIBLE, ...MALFORMED]) {
      const r = await rootsctl(['grant', 'fs', dir, '--until', when], { env });
      t.equal(r.code, 2, `${when}: usage error`);
      t.match(r.err, `--until "${when}" is not an RFC 3339 date-time with a zone`, when);
    }
    // The control: a real date passes the check and fails only for want of a daemon.
    const ok = await rootsctl(['grant', 'fs', dir, '--until', '2028-02-29T00:00:00Z'], { env });
    t.equal(ok.code, 3, 'a real date reaches the connection step');
  },
);

void t.test('door 3: grants/add on the socket refuses an impossible expires', async (t) => {
  const dir = shortDir();
  mkdirSync(join(dir, 'dl'));
  const d = await startDaemon(t, `version: 1\nservers:\n  fs:\n    roots: []\n`, { dir });
  const raw = await rawConnect(d.socket);
  t.teardown(() => raw.close());
  let id = 1;
  const ask = async (method: string, params: unknown) => {
    raw.send(`${JSON.stringify({ jsonrpc: '2.0', id: id++, method, params })}\n`);
    return raw.next();
  };
  await ask('initialize', { protocolVersion: 'mcp-roots/1' });
  for (const when of [...IMPOSSIBLE, ...MALFORMED]) {
    const answer = await ask('grants/add', { server: 'fs', path: join(dir, 'dl'), expires: when });
    t.match(
      answer,
      {
        error: {
          code: RpcCode.INVALID_PARAMS,
          message: 'grants/add: params.expires must be an RFC 3339 date-time with a zone',
        },
      },
      when,
    );
  }
  const c = await d.connect();
  t.same((await c.grants()).grants, [], 'no grant was written');
});

void t.test('door 4: the daemon refuses a grants file with an impossible expires', async (t) => {
  const dir = shortDir();
  mkdirSync(join(dir, 'dl'));
  mkdirSync(join(dir, 'state'));
  writeFileSync(
    join(dir, 'state', 'grants.yaml'),
    `version: 1\nservers:\n  fs:\n    roots:\n      - {path: ${join(dir, 'dl')}, expires: "2099-02-30T00:00:00Z"}\n`,
  );
  const d = await startDaemon(t, `version: 1\nservers:\n  fs:\n    roots: []\n`, { dir });
  const c = await d.connect();
  const status = await c.status();
  t.match(status.policy.errors, [
    {
      file: join(dir, 'state', 'grants.yaml'),
      line: 5,
      message: '"2099-02-30T00:00:00Z" is not an RFC 3339 date-time with a zone',
    },
  ]);
  t.same((await c.listRoots('fs')).roots, [], 'the grant gives nothing');
  t.same((await c.grants()).grants, [], 'and is not listed');
});
