/** The decision log: every kind of entry from a real daemon, rotation, and a log that cannot be written. */
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { Decision } from '../../common/decision.js';
import { decisionLogFile } from '../../common/locations.js';
import { readDecisions } from '../../cli/decision-reader.js';
import { DecisionLog } from '../../daemon/decision-log.js';
import { makeLogger } from '../../daemon/logger.js';
import { shortDir, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/proxy.js';

const POLICY = (dir: string, extra = '') => `version: 1
deny:
  - ${dir}/work/secret
servers:
  fs:
    roots: [{path: ${dir}/work}]
${extra}`;

async function entries(d: TestDaemon): Promise<Decision[]> {
  return (await readDecisions(decisionLogFile(d.stateDir))).entries;
}

async function waitForEntry(
  d: TestDaemon,
  what: string,
  match: (e: Decision) => boolean,
): Promise<Decision> {
  let found: Decision | undefined;
  await waitFor(
    async () => {
      found = (await entries(d)).find(match);
      return found !== undefined;
    },
    10_000,
    what,
  );
  return found!;
}

void t.test('a real daemon records every kind of decision', async (t) => {
  const dir = shortDir();
  for (const p of ['work/secret', 'work/src', 'dl', 'other'])
    mkdirSync(join(dir, p), { recursive: true });
  const d = await startDaemon(t, POLICY(dir), { dir });
  const c = await d.connect();

  await waitForEntry(
    d,
    'the first load',
    (e) => e.kind === 'policy-loaded' && e.reason === 'start',
  );

  await c.check('fs', join(dir, 'work/src/a.ts'), 'read', {
    tool: 'read_text_file',
    client: 'host 1.0',
  });
  await c.check('fs', join(dir, 'work/secret/key'), 'read');
  // A look a program takes for itself, `record: false`, is answered and not written.
  t.equal(
    (await c.check('fs', join(dir, 'other/unrecorded'), 'read', { record: false })).allowed,
    false,
  );
  await c.check('fs', join(dir, 'other/x'), 'write', { tool: 'write_file' });
  const allowed = await waitForEntry(
    d,
    'the allowed check',
    (e) => e.kind === 'check' && e.allowed && e.path.endsWith('a.ts'),
  );
  t.match(allowed, { server: 'fs', access: 'read', tool: 'read_text_file', client: 'host 1.0' });
  t.match(
    allowed,
    { reason: /inside the root file:.*\/work, from root .*\/work \(.*mcp-roots\.yaml:6:\d+\)/ },
    'names the root entry with file:line, as refusals name theirs',
  );
  const denied = await waitForEntry(
    d,
    'the denied check',
    (e) => e.kind === 'check' && !e.allowed && e.path.endsWith('key'),
  );
  t.match(
    denied,
    { access: 'read', reason: /deny .*secret.*mcp-roots\.yaml:3:/ },
    'names the rule with file:line',
  );
  t.notOk('tool' in denied, 'no tool when the caller named none');
  // Asked for no tool call and no host (as `rootsctl check` asks): the client that asked is named,
  // so that a person's own question does not read as a server's refusal.
  t.equal(denied.kind === 'check' && denied.client, 'test 0', 'the connection that asked');
  const forTool = await waitForEntry(
    d,
    'the outside write',
    (e) => e.kind === 'check' && e.path.endsWith('other/x'),
  );
  t.notOk('client' in forTool, "a tool call's check names only the host the caller named");
  // Written after the unrecorded one, so that one would be in the file by now.
  t.notOk(
    (await entries(d)).some((e) => e.kind === 'check' && e.path.endsWith('unrecorded')),
    'a check with record: false is not in the log',
  );
  await waitForEntry(
    d,
    'the outside write',
    (e) => e.kind === 'check' && e.access === 'write' && !e.allowed,
  );

  await c.listRoots('fs', { subscribe: true });
  const { grant } = await c.grant('fs', join(dir, 'dl'), { seconds: 1, readOnly: true });
  const added = await waitForEntry(d, 'grant-added', (e) => e.kind === 'grant-added');
  const byGrant = await c.check('fs', join(dir, 'dl'), 'write');
  t.match(
    byGrant.reason,
    /read-only root file:.*\/dl, from root .*\/dl \(.*grants\.yaml:\d+:\d+\)/,
    'a grant is named by its entry in the grants file',
  );
  t.match(added, { server: 'fs', path: grant.path, readOnly: true, expiresAt: grant.expires });
  const roots = await waitForEntry(
    d,
    'the list with the grant',
    (e) => e.kind === 'roots' && e.added.some((u) => u.endsWith('/dl')),
  );
  t.match(roots, { server: 'fs', removed: [] });
  await waitForEntry(
    d,
    'grant-expired',
    (e) => e.kind === 'grant-expired' && e.path === grant.path,
  );
  await waitForEntry(
    d,
    'the list without the grant',
    (e) => e.kind === 'roots' && e.removed.some((u) => u.endsWith('/dl')),
  );

  await c.grant('fs', join(dir, 'other'), { seconds: 600 });
  await c.revoke('fs', join(dir, 'other'));
  await waitForEntry(
    d,
    'grant-revoked',
    (e) => e.kind === 'grant-revoked' && e.path.endsWith('other'),
  );

  // A server no policy names gets its roots only from a grant: the revoke forgets the name,
  // and the log still shows the root going, not only coming.
  mkdirSync(join(dir, 'lone'));
  await c.grant('unnamed-server', join(dir, 'lone'), { seconds: 600 });
  await waitForEntry(
    d,
    "the unnamed server's root given",
    (e) => e.kind === 'roots' && e.server === 'unnamed-server' && e.added.length === 1,
  );
  await c.revoke('unnamed-server', join(dir, 'lone'));
  const gone = await waitForEntry(
    d,
    "the unnamed server's root taken away",
    (e) => e.kind === 'roots' && e.server === 'unnamed-server' && e.removed.length === 1,
  );
  t.match(gone, { added: [], removed: [/\/lone$/] });

  // A root made read-only is in both lists: a change of its access, not of nothing.
  d.writePolicy(POLICY(dir).replace(`{path: ${dir}/work}`, `{path: ${dir}/work, readOnly: true}`));
  await c.reload();
  const access = await waitForEntry(
    d,
    'the list with the root made read-only',
    (e) => e.kind === 'roots' && (e.changed?.length ?? 0) > 0,
  );
  t.match(access, { server: 'fs', added: [], removed: [], changed: [/\/work$/] });
  t.ok(
    d.logs.some((l) => /roots changed for fs: \+0 -0 ~1/.test(l)),
    "the daemon's own log says what changed",
  );
  t.notOk(
    (await entries(d)).some((e) => e.kind === 'roots' && 'changed' in e && e.changed?.length === 0),
    'no empty list of changed roots is written',
  );

  d.writePolicy('version: 1\nservers: {fs: {roots: [{path: 3}]}}\n');
  await c.reload();
  const rejected = await waitForEntry(d, 'policy-rejected', (e) => e.kind === 'policy-rejected');
  t.match(rejected, { errors: [/mcp-roots\.yaml:2:\d+: /] });

  await c.lockdown(true);
  // A grant refused is recorded too, with why.
  await t.rejects(c.grant('fs', join(dir, 'work'), { seconds: 60 }), { message: /lockdown is on/ });
  const refusedGrant = await waitForEntry(d, 'grant-refused', (e) => e.kind === 'grant-refused');
  t.match(refusedGrant, { server: 'fs', path: join(dir, 'work'), reason: /lockdown/ });
  await c.lockdown(false);
  await waitForEntry(d, 'lockdown off', (e) => e.kind === 'lockdown' && !e.on);
  t.ok(
    (await entries(d)).some((e) => e.kind === 'lockdown' && e.on),
    'lockdown on',
  );

  const file = decisionLogFile(d.stateDir);
  t.equal(statSync(file).mode & 0o777, 0o600, 'the log is private');
  const text = readFileSync(file, 'utf8');
  t.notMatch(text, /"arguments"|"content"/, 'paths only, never arguments or contents');
  const write = await c.check('fs', file, 'write');
  t.notOk(write.allowed, 'no server may write the log');
});

void t.test('rotation keeps a few files of bounded size, oldest first when read', async (t) => {
  const dir = shortDir();
  const file = join(dir, 'state', 'decisions.jsonl');
  const log = new DecisionLog({
    file,
    maxBytes: 2000,
    keep: 2,
    log: makeLogger({ level: 'error' }),
  });
  for (let i = 0; i < 100; i++) {
    log.record({
      kind: 'check',
      server: 's',
      path: `/p/${i}`,
      access: 'read',
      allowed: true,
      reason: 'r',
    });
    if (i % 10 === 9) await log.flush();
  }
  await log.close();
  const names = readdirSync(join(dir, 'state')).sort();
  t.same(names, ['decisions.jsonl', 'decisions.jsonl.1', 'decisions.jsonl.2']);
  for (const n of names)
    t.ok(statSync(join(dir, 'state', n)).size <= 2000, `${n} within the bound`);
  const { entries: read, bad } = await readDecisions(file);
  t.equal(bad, 0);
  const numbers = read.map((e) => (e.kind === 'check' ? Number(e.path.slice(3)) : -1));
  t.same(
    numbers,
    [...numbers].sort((a, b) => a - b),
    'oldest first',
  );
  t.equal(numbers.at(-1), 99, 'the newest survives');
});

void t.test('a log that cannot be written is said once and costs nothing else', async (t) => {
  const dir = shortDir();
  const elsewhere = join(dir, 'elsewhere.txt');
  writeFileSync(elsewhere, 'untouched\n');
  mkdirSync(join(dir, 'state'));
  const file = join(dir, 'state', 'decisions.jsonl');
  symlinkSync(elsewhere, file);
  const lines: string[] = [];
  const log = new DecisionLog({
    file,
    maxBytes: 1 << 20,
    keep: 1,
    log: makeLogger({
      level: 'warn',
      stream: new (await import('node:stream')).Writable({
        write(chunk: Buffer, _e, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    }),
  });
  for (let i = 0; i < 3; i++) {
    log.record({ kind: 'lockdown', on: true });
    await log.flush();
  }
  await log.close();
  t.equal(readFileSync(elsewhere, 'utf8'), 'untouched\n', 'a link at the log path is not followed');
  t.equal(lines.length, 1, 'said once, not once per decision');
  t.match(lines[0], /cannot write the decision log/);
  t.ok(existsSync(file));
});

void t.test('--decision-log-kib 0 records nothing', async (t) => {
  const dir = shortDir();
  mkdirSync(join(dir, 'work'), { recursive: true });
  const d = await startDaemon(t, POLICY(dir), { dir, decisionLogBytes: 0 });
  const c = await d.connect();
  await c.check('fs', join(dir, 'work/x'), 'read');
  t.notOk(existsSync(decisionLogFile(d.stateDir)));
});
