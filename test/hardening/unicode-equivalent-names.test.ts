/**
 * Names the filesystem server opens in place of the one asked for. When a path does not exist,
 * `@modelcontextprotocol/server-filesystem` walks it name by name and takes, for a name that is
 * missing, the one entry of that directory it counts as the same name: equal under NFC, and in
 * 2.0.1 also with every Unicode space separator as a space. A check of the path as written, and
 * of its whole NFC and NFD spellings, misses every case where the names on disk are not all in
 * one form, or where a name's equivalent is a different string in both forms: a directory named
 * in NFC beside one named in NFD, the singletons (KELVIN SIGN is `K` in NFC and NFD alike, a CJK
 * compatibility ideograph is its unified twin), and a no-break space for a space. Each row asks
 * through the real proxy and the real server (both releases, each under its era's host) for a
 * spelling the server resolves to a denied or read-only name on disk; the marker must never come
 * back and the proxy must refuse, and allowed names must still work.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { FS2_SERVER, startEraHost } from '../helpers/era-host.js';
import { ownedShortDir, startProxiedFs, waitFor } from '../helpers/proxy.js';

const CAFE_NFC = 'caf\u00e9';
const CAFE_NFD = 'cafe\u0301';
const NAIVE_NFC = 'na\u00efve';
const NAIVE_NFD = 'nai\u0308ve';
/** `Keys` with KELVIN SIGN (U+212A), whose NFC and NFD are both the ASCII `K`. */
const KEYS_KELVIN = '\u212aeys';
/** `Keep` likewise. */
const KEEP_KELVIN = '\u212aeep';
/** CJK COMPATIBILITY IDEOGRAPH-F900, whose NFC and NFD are both U+8C48. */
const COMPAT = '\uf900';
const UNIFIED = '\u8c48';
/** `my secret` with a NO-BREAK SPACE, as macOS names a screenshot. */
const NBSP_NAME = 'my\u00a0secret';
const MARK = 'MARK-EQUIVALENT-denied';

/** A tool call through the proxy to one of the servers. */
type Call = (
  tool: string,
  args: Record<string, unknown>,
) => Promise<{ text: string; isError: boolean }>;

void t.test('server-filesystem 2026.8.31 under a 2025 host (SDK v1)', async (t) => {
  await attack(t, async (socket) => {
    const fs = await startProxiedFs(t, { server: 'fs', socket });
    await waitFor(async () => (await fs.allowed()).length === 2, 30_000, 'the first list');
    return (tool, args) => fs.call(tool, args);
  });
});

void t.test('server-filesystem 2.0.1 under a 2026-07-28 host (SDK v2)', async (t) => {
  await attack(t, async (socket, w) => {
    const host = await startEraHost(t, {
      kind: 'v2-pin',
      server: 'fs',
      socket,
      serverCommand: [process.execPath, FS2_SERVER, w],
    });
    return (tool, args) => host.call(tool, args);
  });
});

/** The workspace and the daemon; `start` puts a host and a server behind the proxy. */
async function attack(t: Test, start: (socket: string, w: string) => Promise<Call>): Promise<void> {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  // On disk: `café` in NFC holding `naïve` in NFD; a Kelvin-sign name; a compatibility
  // ideograph; a read-only root with a Kelvin-sign name inside the writable one.
  for (const d of [
    `alpha/${CAFE_NFC}/${NAIVE_NFD}`,
    `alpha/${KEYS_KELVIN}`,
    `alpha/${COMPAT}`,
    `alpha/${KEEP_KELVIN}`,
    `alpha/${NBSP_NAME}`,
    'alpha/open',
  ])
    mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, `alpha/${CAFE_NFC}/${NAIVE_NFD}/s.txt`), MARK);
  writeFileSync(join(w, `alpha/${KEYS_KELVIN}/k.txt`), MARK);
  writeFileSync(join(w, `alpha/${COMPAT}/c.txt`), MARK);
  writeFileSync(join(w, `alpha/${KEEP_KELVIN}/r.txt`), MARK);
  writeFileSync(join(w, `alpha/${NBSP_NAME}/m.txt`), MARK);
  writeFileSync(join(w, 'alpha/open/o.txt'), 'open ok');
  const d = await startDaemon(
    t,
    `version: 1
servers:
  fs:
    roots:
      - path: ${w}/alpha
      - path: ${w}/alpha/${KEEP_KELVIN}
        readOnly: true
    deny:
      - ${w}/alpha/${CAFE_NFC}/${NAIVE_NFD}
      - ${w}/alpha/${KEYS_KELVIN}
      - ${w}/alpha/${COMPAT}
      - ${w}/alpha/${NBSP_NAME}
`,
    { dir },
  );
  const call = await start(d.socket, w);

  const rows: { what: string; tool: string; args: Record<string, unknown>; absent?: string }[] = [
    {
      what: 'each name in the other form than on disk',
      tool: 'read_text_file',
      args: { path: `${w}/alpha/${CAFE_NFD}/${NAIVE_NFC}/s.txt` },
    },
    {
      what: 'the same, listing the directory',
      tool: 'list_directory',
      args: { path: `${w}/alpha/${CAFE_NFD}/${NAIVE_NFC}` },
    },
    {
      what: 'an ASCII path whose K the server takes for KELVIN SIGN',
      tool: 'read_text_file',
      args: { path: `${w}/alpha/Keys/k.txt` },
    },
    {
      what: 'the same, writing',
      tool: 'write_file',
      args: { path: `${w}/alpha/Keys/k.txt`, content: 'overwritten' },
    },
    {
      what: 'the unified ideograph for its compatibility twin',
      tool: 'read_text_file',
      args: { path: `${w}/alpha/${UNIFIED}/c.txt` },
    },
    {
      what: 'a space for the no-break space of a denied name',
      tool: 'read_text_file',
      args: { path: `${w}/alpha/my secret/m.txt` },
    },
    {
      what: 'a new file in a read-only root, by its ASCII spelling',
      tool: 'write_file',
      args: { path: `${w}/alpha/Keep/new.txt`, content: 'written' },
      absent: `alpha/${KEEP_KELVIN}/new.txt`,
    },
    {
      what: 'moving a file into the read-only root by its ASCII spelling',
      tool: 'move_file',
      args: { source: `${w}/alpha/open/o.txt`, destination: `${w}/alpha/Keep/o.txt` },
      absent: `alpha/${KEEP_KELVIN}/o.txt`,
    },
    {
      what: 'moving the read-only root away by its ASCII spelling',
      tool: 'move_file',
      args: { source: `${w}/alpha/Keep`, destination: `${w}/alpha/moved` },
      absent: 'alpha/moved',
    },
    {
      what: 'moving the denied directory away by its other forms',
      tool: 'move_file',
      args: { source: `${w}/alpha/${CAFE_NFD}/${NAIVE_NFC}`, destination: `${w}/alpha/out` },
      absent: 'alpha/out',
    },
  ];
  for (const row of rows) {
    const r = await call(row.tool, row.args);
    t.equal(r.isError, true, `${row.what}: an error`);
    t.notOk(r.text.includes(MARK), `${row.what}: no marker comes back`);
    t.match(r.text, /^mcp-roots-proxy refused /, `${row.what}: refused by the proxy`);
    if (row.absent !== undefined)
      t.notOk(existsSync(join(w, row.absent)), `${row.what}: ${row.absent} was not made`);
  }
  for (const f of [
    `alpha/${CAFE_NFC}/${NAIVE_NFD}/s.txt`,
    `alpha/${KEYS_KELVIN}/k.txt`,
    `alpha/${KEEP_KELVIN}/r.txt`,
    `alpha/${NBSP_NAME}/m.txt`,
  ])
    t.equal(readFileSync(join(w, f), 'utf8'), MARK, `${f} is untouched`);

  // What is allowed stays allowed: the root itself, a new file beside the equivalents, and a
  // name that is missing with no equivalent on disk.
  t.same(await call('read_text_file', { path: `${w}/alpha/open/o.txt` }), {
    text: 'open ok',
    isError: false,
  });
  const made = await call('write_file', { path: `${w}/alpha/Kept.txt`, content: 'new' });
  t.equal(made.isError, false, 'a new name with no equivalent on disk is written');
  t.equal(readFileSync(join(w, 'alpha/Kept.txt'), 'utf8'), 'new');
}
