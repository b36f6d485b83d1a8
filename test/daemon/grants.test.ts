/** Temporary grants against a real daemon (docs/protocol.md grants/*). */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { commandOf } from '../../common/command-line.js';
import { parsePolicyText } from '../../policies/index.js';
import { RootsClient } from '../../protocol/client.js';
import { rootsctl } from '../helpers/cli.js';
import { nextEvent, shortDir, startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';
import { spawnDaemon } from '../helpers/spawn-daemon.js';

const POLICY = (dir: string) => `version: 1
deny:
  - ${dir}/secret
  - {path: ${dir}/ro, access: write}
servers:
  fs:
    roots: [{path: ${dir}/base}]
`;

function tree(dir: string) {
  for (const d of ['base', 'dl', 'secret', 'ro', 'other'])
    mkdirSync(join(dir, d), { recursive: true });
}

void t.test('grant, list, revoke, with notifications', async (t) => {
  const dir = shortDir();
  tree(dir);
  const d = await startDaemon(t, POLICY(dir), { dir });
  const c = await d.connect();
  const first = await c.listRoots('fs', { subscribe: true });
  t.equal(first.roots.length, 1);
  const changed = nextEvent<{ roots: { uri: string }[] }>(c, 'list_changed');
  const { grant } = await c.grant('fs', join(dir, 'dl'), { seconds: 600, name: 'Downloads' });
  t.equal(grant.path, realpathSync(join(dir, 'dl')));
  t.equal(grant.uri, pathToFileURL(grant.path).href);
  t.equal(grant.readOnly, false);
  t.equal(grant.name, 'Downloads');
  const pushed = await changed;
  t.same(
    pushed.roots.map((r) => r.uri),
    [pathToFileURL(realpathSync(join(dir, 'base'))).href, grant.uri],
    'the grant is pushed as the call returns',
  );
  t.same((await c.grants()).grants, [grant]);
  t.ok((await c.check('fs', join(dir, 'dl/x'), 'write')).allowed);
  const st = statSync(join(d.stateDir, 'grants.yaml'));
  t.equal(st.mode & 0o777, 0o600, 'grants file is 0600');
  t.equal(statSync(d.stateDir).mode & 0o777, 0o700, 'state dir is 0700');
  const parsed = parsePolicyText(readFileSync(join(d.stateDir, 'grants.yaml')), 'grants.yaml');
  t.same(parsed.errors, [], 'the grants file is a valid policy file');
  const gone = nextEvent<{ roots: unknown[] }>(c, 'list_changed');
  t.same(await c.revoke('fs', join(dir, 'dl')), { revoked: 1 });
  t.equal((await gone).roots.length, 1);
  t.same(await c.revoke('fs'), { revoked: 0 });
});

void t.test('a 2-second grant expires with a notification', async (t) => {
  const dir = shortDir();
  tree(dir);
  const d = await startDaemon(t, POLICY(dir), { dir });
  const c = await d.connect();
  await c.listRoots('fs', { subscribe: true });
  const added = nextEvent(c, 'list_changed');
  const { grant } = await c.grant('fs', join(dir, 'dl'), { seconds: 2 });
  await added;
  const expired = await nextEvent<{ roots: unknown[] }>(c, 'list_changed');
  t.equal(expired.roots.length, 1, 'the grant is gone');
  // Against the grant's own expiry, not the time its notification reached a loaded test.
  t.ok(Date.now() >= Date.parse(grant.expires), 'not before its time');
  t.same((await c.grants()).grants, []);
  const file = parsePolicyText(readFileSync(join(d.stateDir, 'grants.yaml')), 'grants.yaml');
  t.same(file.policy?.servers, [], 'the expired grant is gone from the file too');
  const status = await c.status();
  t.same(
    status.policy.warnings.filter((w) => w.message.includes('expired')),
    [],
    'and leaves no warning behind',
  );
  // A path it held is refused, and the refusal says which grant ended and when.
  const refused = await c.check('fs', join(dir, 'dl'));
  t.equal(refused.allowed, false);
  t.match(
    refused.reason,
    `is outside every root of fs: its grant of ${join(dir, 'dl')} expired at ${grant.expires}`,
  );
});

void t.test('denies hold: access all refuses, access write makes it read-only', async (t) => {
  const dir = shortDir();
  tree(dir);
  const d = await startDaemon(t, POLICY(dir), { dir });
  const c = await d.connect();
  await t.rejects(c.grant('fs', join(dir, 'secret')), {
    code: 'GRANT_DENIED',
    message: /denied to fs by deny/,
  });
  const res = (await c.grant('fs', join(dir, 'ro'))) as {
    grant: { readOnly: boolean };
    notice?: string;
  };
  t.equal(res.grant.readOnly, true);
  t.match(res.notice, /read-only: writing .* is denied/);
  await t.rejects(c.grant('fs', join(dir, 'nope')), { code: 'PATH_NOT_FOUND' });
  await t.rejects(c.grant('f*', join(dir, 'dl')), { code: 'GRANT_DENIED' });
});

void t.test('50 concurrent grants are all kept; a restart keeps them', async (t) => {
  const dir = shortDir();
  tree(dir);
  for (let i = 0; i < 50; i++) mkdirSync(join(dir, 'other', `d${i}`));
  let d = await startDaemon(t, POLICY(dir), { dir });
  let c = await d.connect();
  await Promise.all(
    Array.from({ length: 50 }, (_, i) => c.grant(`s${i % 5}`, join(dir, 'other', `d${i}`))),
  );
  t.equal((await c.grants()).grants.length, 50);
  await d.close();
  d = await startDaemon(t, POLICY(dir), { dir });
  c = await d.connect();
  t.equal((await c.grants()).grants.length, 50, 'all survive a restart');
  t.equal((await c.listRoots('s0')).roots.length, 10);
});

void t.test('servers named like Object.prototype members get grants as any other', async (t) => {
  const dir = shortDir();
  tree(dir);
  let d = await startDaemon(t, POLICY(dir), { dir });
  let c = await d.connect();
  const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];
  for (const name of names) await c.grant(name, join(dir, 'dl'), { seconds: 600 });
  for (const name of names)
    t.same(
      (await c.listRoots(name)).roots.map((r) => r.uri),
      [pathToFileURL(realpathSync(join(dir, 'dl'))).href],
      `${name}: granted`,
    );
  t.equal((await c.listRoots('fs')).roots.length, 1, 'no other server got them');
  const parsed = parsePolicyText(readFileSync(join(d.stateDir, 'grants.yaml')), 'grants.yaml');
  t.same(parsed.errors, [], 'the grants file is a valid policy file');
  await d.close();
  d = await startDaemon(t, POLICY(dir), { dir });
  c = await d.connect();
  t.equal((await c.grants()).grants.length, names.length, 'all survive a restart');
  t.same(await c.revoke('__proto__'), { revoked: 1 });
});

void t.test('a grant works while the policy file is invalid', async (t) => {
  const dir = shortDir();
  tree(dir);
  const d = await startDaemon(t, POLICY(dir), { dir });
  const c = await d.connect();
  writeFileSync(d.config, 'version: 1\nservers: [oops\n');
  const reload = await c.reload();
  t.equal(reload.ok, false);
  await c.grant('fs', join(dir, 'dl'));
  t.equal((await c.listRoots('fs')).roots.length, 2, 'last good policy plus the grant');
});

void t.test('lockdown empties every list, refuses grants, and survives a restart', async (t) => {
  const dir = shortDir();
  tree(dir);
  let d = await startDaemon(t, POLICY(dir), { dir });
  let c = await d.connect();
  await c.listRoots('fs', { subscribe: true });
  const emptied = nextEvent<{ roots: unknown[] }>(c, 'list_changed');
  t.same(await c.lockdown(true), { lockdown: true });
  t.same((await emptied).roots, []);
  const refused = await c.check('fs', join(dir, 'base/x'), 'read');
  t.equal(refused.allowed, false);
  // How to end it, as the person can run rootsctl wherever they read it (a host's log): this
  // daemon's socket is not the default one.
  const unlock = `${commandOf('rootsctl', { env: process.env })} --socket ${d.socket} unlock`;
  t.equal(refused.reason, `lockdown is on: every access is refused until \`${unlock}\``);
  await t.rejects(c.grant('fs', join(dir, 'dl')), { code: 'LOCKDOWN', hint: unlock });
  t.equal((await c.status()).lockdown, true);
  await d.close();
  d = await startDaemon(t, POLICY(dir), { dir });
  c = await d.connect();
  t.equal((await c.status()).lockdown, true, 'still locked after a restart');
  t.ok(
    d.logs.some((l) => /lockdown is on \(since .*\): every list is empty/.test(l)),
    'and the daemon says so when it starts',
  );
  t.same((await c.listRoots('fs')).roots, []);
  await c.lockdown(false);
  t.equal((await c.listRoots('fs')).roots.length, 1);
});

void t.test('SIGKILL while granting in a loop leaves a grants file that loads', async (t) => {
  const dir = shortDir();
  tree(dir);
  for (let i = 0; i < 20; i++) mkdirSync(join(dir, 'other', `d${i}`));
  writeFileSync(join(dir, 'mcp-roots.yaml'), POLICY(dir));
  const socket = join(dir, 'run', 'rootsd.sock');
  const args = [
    '--config',
    join(dir, 'mcp-roots.yaml'),
    '--socket',
    socket,
    '--state-dir',
    join(dir, 'state'),
  ];
  for (let round = 0; round < 3; round++) {
    const daemon = await spawnDaemon(args, { socket, t, env: { HOME: join(dir, 'home') } });
    await waitFor(() => /listening on/.test(daemon.stderr()), 60_000, `round ${round}: listening`);
    const up = await RootsClient.connect({ socket });
    // Grants one after another; the kill comes once a number of them (different each round)
    // are acknowledged, so it lands while the next one is being written.
    let acked = 0;
    const loop = (async () => {
      for (let i = 0; ; i++) {
        await up.grant('fs', join(dir, 'other', `d${i % 20}`), { seconds: 600 + i });
        acked++;
      }
    })().catch(() => undefined);
    await waitFor(() => acked >= 3 + round * 4, 60_000, `round ${round}: grants acknowledged`);
    daemon.child.kill('SIGKILL');
    await daemon.exited;
    await loop;
    await up.close();
    const parsed = parsePolicyText(readFileSync(join(dir, 'state', 'grants.yaml')), 'grants.yaml');
    t.same(parsed.errors, [], `round ${round}: the grants file loads`);
  }
});

void t.test(
  'a grants file replaced by what is not a file is refused by name, and the daemon serves on',
  async (t) => {
    const dir = shortDir();
    tree(dir);
    const d = await startDaemon(t, POLICY(dir), { dir });
    const c = await d.connect();
    await c.grant('fs', join(dir, 'dl'), { seconds: 600 });
    const grants = join(d.stateDir, 'grants.yaml');
    for (const [what, make] of [
      ['a FIFO', () => execFileSync('mkfifo', [grants])],
      ['a directory', () => mkdirSync(grants)],
    ] as const) {
      rmSync(grants, { recursive: true });
      make();
      const calls: (() => Promise<unknown>)[] = [
        () => c.grants(),
        () => c.grant('fs', join(dir, 'other'), { seconds: 60 }),
      ];
      for (const call of calls) {
        await t.rejects(
          call(),
          {
            code: 'STATE_DIR_UNSAFE',
            message: `the grants file ${grants} is unsafe: it is not a file, so another local user could grant servers any path. Remove it (rm -r ${grants}), or choose another --state-dir.`,
          },
          `${what}: said, not an internal error`,
        );
      }
      // Whether the removal was seen before the FIFO came decides whether the grant still
      // serves; the policy's own root serves either way.
      t.ok(
        (await c.listRoots('fs')).roots.some(
          (r) => r.uri === pathToFileURL(realpathSync(join(dir, 'base'))).href,
        ),
        `${what}: the daemon serves on`,
      );
    }
    rmSync(grants, { recursive: true });
    t.equal(
      (await c.grant('fs', join(dir, 'other'), { seconds: 60 })).grant.readOnly,
      false,
      'moved away, the next grant writes a new file',
    );
  },
);

void t.test('lockdown takes effect even when it cannot be saved', async (t) => {
  const dir = shortDir();
  tree(dir);
  const d = await startDaemon(t, POLICY(dir), { dir });
  const c = await d.connect();
  // Where the lockdown file goes, a directory: its write fails as on a full or read-only disk.
  mkdirSync(join(d.stateDir, 'lockdown'));
  t.match(await c.lockdown(true), {
    lockdown: true,
    notice:
      /^lockdown is on, but cannot be saved in .*lockdown \(EISDIR\): a restart would end it$/,
  });
  t.same((await c.listRoots('fs')).roots, [], 'every list is empty');
  t.equal((await c.check('fs', join(dir, 'base/x'), 'read')).allowed, false);
  t.ok(
    d.logs.some((l) => /lockdown is on, but cannot be saved in .*lockdown \(EISDIR\)/.test(l)),
    'the log says it would not survive a restart',
  );
  const said = await rootsctl(['--socket', d.socket, 'lockdown']);
  t.match(
    said.out,
    /\nnote: lockdown is on, but cannot be saved in .*: a restart would end it\n$/,
    'and so does rootsctl',
  );
  await t.rejects(
    c.lockdown(false),
    {
      message:
        /^cannot remove the lockdown mark .*lockdown \(.*\), so lockdown stays on: remove it by hand, then unlock again$/,
    },
    'an unlock that cannot remove the mark says so',
  );
  t.equal((await c.status()).lockdown, true, 'and lockdown stays on');
});

void t.test('a grants file that says more than a grant does grants nothing', async (t) => {
  const dir = shortDir();
  tree(dir);
  const d = await startDaemon(t, POLICY(dir), { dir });
  const c = await d.connect();
  await c.grant('fs', join(dir, 'dl'), { seconds: 600 });
  const file = join(d.stateDir, 'grants.yaml');
  const good = readFileSync(file, 'utf8');
  const base = pathToFileURL(realpathSync(join(dir, 'base'))).href;
  const soon = new Date(Date.now() + 3600_000).toISOString();
  const cases: [string, string, RegExp][] = [
    [
      'a grant for 2099',
      `version: 1\nservers:\n  fs:\n    roots:\n      - {path: ${dir}/other, expires: "2099-01-01T00:00:00Z"}\n`,
      /grants\.yaml:5:9: a grant may last at most 30 days; this one ends 2099-01-01T00:00:00.000Z/,
    ],
    [
      'no expiry',
      `version: 1\nservers:\n  fs:\n    roots:\n      - {path: ${dir}/other}\n`,
      /grants\.yaml:5:9: a grant has an expires/,
    ],
    [
      'a relative path',
      `version: 1\nservers:\n  fs:\n    roots:\n      - {path: ~/other, expires: "${soon}"}\n`,
      /grants\.yaml:5:16: a grant's path is absolute and canonical; "~\/other" is not/,
    ],
    [
      'a path under /proc',
      `version: 1\nservers:\n  fs:\n    roots:\n      - {path: /proc/self/root/etc, expires: "${soon}"}\n`,
      /grants\.yaml:5:16: \/proc\/self\/root\/etc is under \/proc/,
    ],
    [
      'a server pattern',
      `version: 1\nservers:\n  "*":\n    roots:\n      - {path: ${dir}/other, expires: "${soon}"}\n`,
      /grants\.yaml:3:3: a grant names one server exactly/,
    ],
    [
      'a tool rule and a sandbox',
      `version: 1\nservers:\n  fs:\n    sandbox: true\n    tools: {read_file: {paths: [path]}}\n    roots:\n      - {path: ${dir}/other, expires: "${soon}"}\n`,
      /grants\.yaml:3:3: a grant holds roots only, not tools, sandbox/,
    ],
    [
      'a variable in a path',
      `version: 1\nservers:\n  fs:\n    roots:\n      - {path: "/$P/self", expires: "${soon}"}\n`,
      /grants\.yaml:5:16: a grant's path is absolute and canonical; "\/\$P\/self" is not/,
    ],
    [
      'a pattern for a path',
      `version: 1\nservers:\n  fs:\n    roots:\n      - {path: "${dir}/o[t]her", expires: "${soon}"}\n`,
      /grants\.yaml:5:16: a grant's path is no pattern; ".*o\[t\]her" reads as one/,
    ],
    [
      'a kind',
      `version: 1\nservers:\n  fs:\n    roots:\n      - {path: ${dir}/other, kind: any, expires: "${soon}"}\n`,
      /grants\.yaml:5:9: a grant holds no kind/,
    ],
    [
      'a deny',
      `version: 1\ndeny: [${dir}/base]\nservers:\n  fs:\n    roots:\n      - {path: ${dir}/other, expires: "${soon}"}\n`,
      /grants\.yaml:2:8: a grants file holds no deny/,
    ],
  ];
  for (const [what, text, error] of cases) {
    writeFileSync(file, text);
    t.equal((await c.reload()).ok, false, `${what}: an error`);
    const status = await c.status();
    t.match(
      status.policy.errors.map((e) => `${e.file}:${e.line}:${e.column}: ${e.message}`).join('\n'),
      error,
      what,
    );
    t.same(
      (await c.listRoots('fs')).roots.map((r) => r.uri),
      [base],
      `${what}: none of it serves, nor the grant before it`,
    );
  }
  writeFileSync(file, good);
  t.equal((await c.reload()).ok, true);
  t.equal(
    (await c.listRoots('fs')).roots.length,
    2,
    'the file as the daemon wrote it serves again',
  );
});

void t.test('a directory whose name reads as a pattern is not granted', async (t) => {
  // Gone, `w[1]` in the grants file would match `w1`, and `{a,b}` both a and b.
  const dir = shortDir();
  tree(dir);
  for (const name of ['w[1]', '{base,other}', 'p*', 'q?']) mkdirSync(join(dir, name));
  const d = await startDaemon(t, POLICY(dir), { dir });
  const c = await d.connect();
  for (const name of ['w[1]', '{base,other}', 'p*', 'q?']) {
    await t.rejects(
      c.grant('fs', join(dir, name), { seconds: 600 }),
      {
        code: 'GRANT_DENIED',
        message: /has a name that reads as a pattern .*grant a parent directory instead/,
      },
      name,
    );
  }
  t.same((await c.grants()).grants, [], 'nothing was granted');
});

void t.test('a grant of a path already granted replaces it, and says so', async (t) => {
  const dir = shortDir();
  tree(dir);
  const d = await startDaemon(t, POLICY(dir), { dir });
  const c = await d.connect();
  const first = await c.grant('fs', join(dir, 'dl'), { seconds: 600, readOnly: true });
  t.equal(first.notice, undefined, 'a first grant: no notice');
  const again = await c.grant('fs', join(dir, 'dl'), { seconds: 1200 });
  t.match(
    again.notice,
    new RegExp(
      `replaces the earlier read-only grant of .*dl, which ran until ${first.grant.expires}`,
    ),
    'the person hears what the new grant took the place of',
  );
  t.same(
    (await c.grants()).grants.map((g) => g.readOnly),
    [false],
    'one grant, the new one',
  );
});
