/**
 * Boundary attacks through the enforcing proxy, as rows: a real daemon, the real proxy and the
 * real `@modelcontextprotocol/server-filesystem`, driven by an SDK Client as the host. Every
 * forbidden file holds a marker; a row passes when the marker never comes back and the proxy (or,
 * for a path that names nothing outside the policy, the server) refuses.
 */
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { startDaemon } from './daemon.js';
import { ownedShortDir, startProxiedFs, waitFor, type ProxiedServer } from './proxy.js';

/** Content of every file the agent must never read; a leak shows up as this text in a result. */
export const MARK = {
  secret: 'MARK-SECRET-denied',
  cafe: 'MARK-CAFE-denied-nfc',
  outside: 'MARK-OUTSIDE-no-root',
  evil: 'MARK-EVIL-prefix-sibling',
  ro: 'MARK-RO-readonly',
} as const;
export const LEAKS = Object.values(MARK);

/** `café` spelled composed (NFC) and decomposed (NFD). */
export const CAFE_NFC = 'caf\u00e9';
export const CAFE_NFD = 'cafe\u0301';
export const NAIVE_NFC = 'na\u00efve';
export const NAIVE_NFD = 'nai\u0308ve';

export function makeWorkspace(w: string): void {
  for (const d of [
    'a-ro',
    'alpha/secret',
    `alpha/${CAFE_NFC}`,
    'alpha/sub',
    'alpha-evil',
    'outside',
    NAIVE_NFC,
  ]) {
    mkdirSync(join(w, d), { recursive: true });
  }
  writeFileSync(join(w, 'a-ro/r.txt'), MARK.ro);
  writeFileSync(join(w, 'alpha/a.txt'), 'alpha ok');
  writeFileSync(join(w, 'alpha/sub/s.txt'), 'sub ok');
  writeFileSync(join(w, 'alpha/secret/s.txt'), MARK.secret);
  writeFileSync(join(w, `alpha/${CAFE_NFC}/c.txt`), MARK.cafe);
  writeFileSync(join(w, 'alpha-evil/e.txt'), MARK.evil);
  writeFileSync(join(w, 'outside/o.txt'), MARK.outside);
  writeFileSync(join(w, `${NAIVE_NFC}/n.txt`), 'naive ok');
  symlinkSync(join(w, 'outside'), join(w, 'alpha/link-out'));
  symlinkSync(join(w, 'alpha/secret'), join(w, 'alpha/to-secret'));
  symlinkSync(join(w, 'outside/new.txt'), join(w, 'alpha/dangling'));
  symlinkSync(join(w, 'alpha/sub'), join(w, 'alpha/swap'));
}

export function policy(w: string): string {
  return `version: 1
servers:
  fs:
    roots:
      - path: ${w}/a-ro
        readOnly: true
      - path: ${w}/alpha
      - path: ${w}/${NAIVE_NFC}
    deny:
      - ${w}/alpha/secret
      - ${w}/alpha/${CAFE_NFC}
`;
}

/**
 * `proxy`: the proxy must refuse (isError, "mcp-roots-proxy refused", naming the value).
 * `contained`: the value names nothing outside the policy (a literal `%2e%2e` directory, say): the
 * call may reach the server, which fails to find it; no marker may come back.
 */
export type Expect = 'proxy' | 'contained';

export interface Row {
  what: string;
  tool: string;
  args: (w: string) => Record<string, unknown>;
  expect: Expect;
  /** The refusal text must match this. */
  why?: RegExp;
  /** Paths (relative to the workspace) that must not exist afterwards. */
  absent?: string[];
}

export const read = (p: (w: string) => string) => (w: string) => ({ path: p(w) });

/** The workspace, a daemon on its policy, and the filesystem server behind the proxy, listed. */
export async function startBoundary(t: Test): Promise<{ w: string; fs: ProxiedServer }> {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  makeWorkspace(w);
  const d = await startDaemon(t, policy(w), { dir });
  const fs = await startProxiedFs(t, { server: 'fs', socket: d.socket });
  await waitFor(async () => (await fs.allowed()).length === 3, 30_000, 'the first list');

  t.same(await fs.call('read_text_file', { path: `${w}/alpha/a.txt` }), {
    text: 'alpha ok',
    isError: false,
  });
  return { w, fs };
}

/** Every row attacked, one after another; then the read-only root must be untouched. */
export async function attackRows(
  t: Test,
  fs: ProxiedServer,
  w: string,
  rows: Row[],
): Promise<void> {
  let refusedByProxy = 0;
  for (const row of rows) {
    const args = row.args(w);
    const r = await fs.call(row.tool, args);
    const shown = JSON.stringify(args).slice(0, 120);
    t.equal(r.isError, true, `${row.what}: ${row.tool} ${shown} is an error`);
    for (const m of LEAKS) t.notOk(r.text.includes(m), `${row.what}: no marker comes back`);
    if (row.expect === 'proxy') {
      t.match(r.text, /^mcp-roots-proxy refused /, `${row.what}: refused by the proxy`);
      if (row.why) t.match(r.text, row.why, `${row.what}: the reason`);
      refusedByProxy++;
    } else {
      t.notMatch(r.text, /MARK-/, `${row.what}: the server found nothing outside the policy`);
    }
    for (const a of row.absent ?? []) t.notOk(existsSync(join(w, a)), `${row.what}: ${a} absent`);
  }
  t.comment(`${rows.length} attack rows, ${refusedByProxy} refused by the proxy`);
  t.same(readdirSync(join(w, 'a-ro')), ['r.txt'], 'the read-only root is untouched');
}
