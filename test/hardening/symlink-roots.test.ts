/**
 * Symlinks and URIs must never widen the policy, through the real daemon, the real proxy and the
 * real `@modelcontextprotocol/server-filesystem`. `fs` may write `w/work`; `viewer` reads a
 * directory in it, a glob under it, a directory elsewhere, and globs over cloned repositories.
 * Each row plants a link after the daemon started (what an agent with a writable root, or a
 * `git clone`, can do), waits until the daemon's re-resolution has seen it, then reads through
 * the proxy: the marker never comes back, and the daemon's list and its check agree.
 */
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import type { RootsClient } from '../../protocol/client.js';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, startProxiedFs, waitFor } from '../helpers/proxy.js';

const MARK = 'MARK-LINK-widened';

function makeWorkspace(w: string): void {
  const files: Record<string, string> = {
    'work/shared/ok.txt': 'shared ok',
    'work/mirrors/m0/ok.txt': 'mirror ok',
    'proj/app/vendor/ok.txt': 'vendor ok',
    'repos/good/docs/ok.txt': 'docs ok',
    'repos/other/o.txt': MARK,
    'repos/.hidden/docs/h.txt': MARK,
    'somewhere/s.txt': MARK,
    'somewhere/m/s.txt': MARK,
    'evilproj/app/vendor/s.txt': MARK,
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(w, rel)), { recursive: true });
    writeFileSync(join(w, rel), text);
  }
  mkdirSync(join(w, 'repos/evil'));
  mkdirSync(join(w, 'repos/evil2'));
  // Present when the daemon starts: a glob base the person's policy names, leading to `/`.
  symlinkSync('/', join(w, 'pre'));
}

function policy(w: string): string {
  return `version: 1
servers:
  fs:
    roots:
      - path: ${w}/work
  viewer:
    readOnly: true
    roots:
      - path: ${w}/work/shared
      - path: ${w}/work/mirrors/*
      - path: ${w}/proj/app/vendor
      - path: ${w}/repos/*/docs
      - path: ${w}/top/*
      - path: ${w}/pre/*
`;
}

/** Replace a real directory with a symlink, as `mv dir dir.old && ln -s target dir` does. */
function swapForLink(path: string, target: string): void {
  renameSync(path, `${path}.old`);
  symlinkSync(target, path);
}

interface Row {
  what: string;
  attack: (w: string) => void;
  /** What the daemon must have seen: an explain rule's reason, or a warning's text. */
  seen: { rule: string; reason: string } | { warning: RegExp };
  /** Paths the viewer reads through the proxy afterwards; each must be refused. */
  probes: (w: string) => string[];
}

const ROWS: Row[] = [
  {
    what: "a read-only root in fs's writable area replaced by a link",
    attack: (w) => swapForLink(`${w}/work/shared`, `${w}/somewhere`),
    seen: { rule: 'work/shared', reason: 'symlink-refused' },
    probes: (w) => [`${w}/work/shared/s.txt`, `${w}/somewhere/s.txt`],
  },
  {
    what: 'a glob base replaced by a link',
    attack: (w) => swapForLink(`${w}/work/mirrors`, `${w}/somewhere`),
    seen: { rule: 'work/mirrors/*', reason: 'symlink-refused' },
    probes: (w) => [`${w}/work/mirrors/m/s.txt`, `${w}/somewhere/m/s.txt`],
  },
  {
    what: "a root's ancestor replaced by a link",
    attack: (w) => swapForLink(`${w}/proj`, `${w}/evilproj`),
    seen: { rule: 'proj/app/vendor', reason: 'symlink-refused' },
    probes: (w) => [`${w}/proj/app/vendor/s.txt`, `${w}/evilproj/app/vendor/s.txt`],
  },
  {
    what: 'a cloned repository whose docs is a link to its glob base',
    attack: (w) => symlinkSync('..', `${w}/repos/evil/docs`),
    seen: { warning: /repos\/evil\/docs is a symlink that leads outside/ },
    probes: (w) => [`${w}/repos/evil/docs/other/o.txt`, `${w}/repos/evil/docs/.hidden/docs/h.txt`],
  },
  {
    what: 'a cloned repository whose docs is a link to another repository',
    attack: (w) => symlinkSync('../other', `${w}/repos/evil2/docs`),
    seen: { warning: /repos\/evil2\/docs is a symlink that leads outside/ },
    probes: (w) => [`${w}/repos/evil2/docs/o.txt`, `${w}/repos/other/o.txt`],
  },
  {
    what: 'a glob base created as a link to /',
    attack: (w) => symlinkSync('/', `${w}/top`),
    seen: { rule: 'top/*', reason: 'symlink-refused' },
    probes: (w) => ['/etc/passwd', `${w}/top/etc/passwd`, '/etc'],
  },
];

async function explainReason(c: RootsClient, server: string, path: string): Promise<string> {
  const rule = (await c.explain(server)).rules.find((r) => r.path === path);
  return rule?.reason ?? '';
}

/** Every root the daemon lists is allowed by its check; nothing outside `w` is listed. */
async function listAgreesWithCheck(t: Test, c: RootsClient, w: string, when: string) {
  const { roots } = await c.listRoots('viewer');
  for (const r of roots) {
    const path = fileURLToPath(r.uri);
    t.ok(path.startsWith(`${w}/`), `${when}: ${r.uri} lies in the workspace`);
    t.ok((await c.check('viewer', path, 'read')).allowed, `${when}: check allows ${r.uri}`);
  }
}

void t.test('links planted after start never widen the roots', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  makeWorkspace(w);
  const d = await startDaemon(t, policy(w), { dir });
  const c = await d.connect();
  const viewer = await startProxiedFs(t, { server: 'viewer', socket: d.socket });
  await waitFor(async () => (await viewer.allowed()).length === 4, 10_000, 'the first list');
  t.same(await viewer.call('read_text_file', { path: `${w}/work/shared/ok.txt` }), {
    text: 'shared ok',
    isError: false,
  });
  t.equal(await explainReason(c, 'viewer', `${w}/pre/*`), 'symlink-refused', 'pre/* -> / at start');
  await listAgreesWithCheck(t, c, w, 'at start');

  for (const row of ROWS) {
    row.attack(w);
    await waitFor(
      async () => {
        if ('rule' in row.seen)
          return (await explainReason(c, 'viewer', `${w}/${row.seen.rule}`)) === row.seen.reason;
        const re = row.seen.warning;
        return (await c.status()).policy.warnings.some((x) => re.test(x.message));
      },
      10_000,
      `the daemon's re-resolution after: ${row.what}`,
    );
    for (const path of row.probes(w)) {
      const r = await viewer.call('read_text_file', { path });
      t.equal(r.isError, true, `${row.what}: reading ${path} is an error`);
      t.notOk(r.text.includes(MARK), `${row.what}: no marker from ${path}`);
      t.match(r.text, /^mcp-roots-proxy refused /, `${row.what}: the proxy refused ${path}`);
      t.notOk(
        (await c.check('viewer', path, 'read')).allowed,
        `${row.what}: check refuses ${path}`,
      );
    }
    await listAgreesWithCheck(t, c, w, `after: ${row.what}`);
  }
  t.same(
    await viewer.call('read_text_file', { path: `${w}/repos/good/docs/ok.txt` }),
    { text: 'docs ok', isError: false },
    'what the policy grants is still readable',
  );

  await t.test('a reload, asked by the person, follows the links as they are now', async (t) => {
    await c.reload();
    t.equal(await explainReason(c, 'viewer', `${w}/work/shared`), '', 'work/shared is followed');
    t.ok((await c.check('viewer', `${w}/somewhere/s.txt`, 'read')).allowed, 'where it leads');
    t.equal(await explainReason(c, 'viewer', `${w}/top/*`), 'symlink-refused', 'never to /');
  });
});
