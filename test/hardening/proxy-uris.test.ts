/**
 * Dot segments and other tricks inside `file:` URIs, through the real proxy and a real daemon, in
 * `resources/read` and in a `format: uri` tool argument. The fixture server reads a URI as
 * Python's urllib does (drop the scheme and host, percent-decode, open), so the operating system
 * follows `lnk` before `..`: with `docs/lnk -> ../vault/sub` and `vault` denied,
 * `file:///…/docs/lnk/../key.txt` is the denied `vault/key.txt`, while a text collapse of the URI
 * gives the allowed `docs/key.txt`. A row passes when the proxy refuses it (or, for an allowed
 * file, when the server reads it) and the denied marker never comes back.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { startProxiedShapes, type Answer } from '../helpers/shapes-server.js';

const MARK = 'MARK-VAULT-denied';

/** A URI built from the workspace, and the reason the proxy must give (or `read` for allowed). */
type Row = [what: string, uri: (w: string) => string, expect: RegExp | 'read'];

const DOT = /dot segment/;
const DENIED = /denied/;

const ROWS: Row[] = [
  ['.. after a link', (w) => `file://${w}/docs/lnk/../key.txt`, DOT],
  ['%2e%2e after a link', (w) => `file://${w}/docs/lnk/%2e%2e/key.txt`, DOT],
  ['%2E%2E after a link', (w) => `file://${w}/docs/lnk/%2E%2E/key.txt`, DOT],
  ['.%2e after a link', (w) => `file://${w}/docs/lnk/.%2e/key.txt`, DOT],
  ['%2E. after a link', (w) => `file://${w}/docs/lnk/%2E./key.txt`, DOT],
  ['. segment', (w) => `file://${w}/docs/./lnk/../key.txt`, DOT],
  ['%2e segment', (w) => `file://${w}/vault/%2e/key.txt`, DOT],
  ['trailing ..', (w) => `file://${w}/docs/lnk/..`, DOT],
  ['localhost and ..', (w) => `file://localhost${w}/docs/lnk/../key.txt`, DOT],
  ['LOCALHOST and %2e%2e', (w) => `file://LOCALHOST${w}/docs/lnk/%2e%2e/key.txt`, DOT],
  ['%2f around ..', (w) => `file://${w}/docs/lnk%2f..%2fkey.txt`, /percent-encodes \//],
  ['%2F%2E%2E%2F', (w) => `file://${w}/docs/lnk%2F%2E%2E%2Fkey.txt`, /percent-encodes \//],
  ['..%2f', (w) => `file://${w}/docs/lnk/..%2fkey.txt`, /percent-encodes \//],
  ['%5c', (w) => `file://${w}/docs/lnk%5c..%5ckey.txt`, /percent-encodes/],
  ['backslashes', (w) => `file://${w}/docs/lnk\\..\\key.txt`, /backslash/],
  ['double encoding', (w) => `file://${w}/docs/lnk/%252e%252e/key.txt`, /twice/],
  ['a host the server ignores', (w) => `file://evil.example${w}/vault/key.txt`, /host/],
  ['a host with a port', (w) => `file://localhost:8080${w}/vault/key.txt`, /host/],
  ['a tab the WHATWG parser drops', (w) => `file://${w}/docs/lnk/.\t./key.txt`, /control/],
  ['a query', (w) => `file://${w}/docs/lnk/../key.txt?x=1`, /query or fragment/],
  ['a fragment', (w) => `file://${w}/docs/lnk/../key.txt#top`, /query or fragment/],
  ['an escaped NUL', (w) => `file://${w}/docs/ok.txt%00/../../vault/key.txt`, /percent-encodes/],
  ['no authority, denied', (w) => `file:${w}/vault/key.txt`, DENIED],
  ['FILE:, denied', (w) => `FILE://${w}/vault/key.txt`, DENIED],
  ['localhost, denied', (w) => `file://localhost${w}/vault/key.txt`, DENIED],
  ['an escaped letter, denied', (w) => `file://${w}/vault/ke%79.txt`, DENIED],
  ['four slashes, denied', (w) => `file:////${w.slice(1)}/vault/key.txt`, DENIED],
  ['through the link, denied', (w) => `file://${w}/docs/lnk/k.txt`, DENIED],
  ['relative', () => 'file:vault/key.txt', /no absolute path/],
  // What URL parsers drop before they read the scheme: the server still reads a file: URI.
  ['a leading space', (w) => ` file://${w}/vault/key.txt`, /raw space or control/],
  ['a leading control character', (w) => `\u0001file://${w}/vault/key.txt`, /raw space or control/],
  ['a leading newline', (w) => `\nfile://${w}/vault/key.txt`, /raw space or control/],
  ['a tab inside the scheme', (w) => `fi\tle://${w}/vault/key.txt`, /raw space or control/],
  ['a CR inside the scheme', (w) => `FIL\rE://${w}/vault/key.txt`, /raw space or control/],
  // What Python's urlopen unwraps: the server reads the URI inside.
  ['wrapped in <>', (w) => `<file://${w}/vault/key.txt>`, /wrapped/],
  ['after URL:', (w) => `URL:file://${w}/vault/key.txt`, /wrapped/],
  ['after U+0085, which Python strips', (w) => `\u0085file://${w}/vault/key.txt`, /raw space/],
  ['wrapped, then U+001F', (w) => `<file://${w}/vault/key.txt>\u001f`, /raw space/],
  ['allowed', (w) => `file://${w}/docs/ok.txt`, 'read'],
  ['allowed, localhost', (w) => `file://localhost${w}/docs/ok.txt`, 'read'],
  ['allowed, an escaped letter', (w) => `file://${w}/docs/o%6B.txt`, 'read'],
  ['allowed, a name starting with ..', (w) => `file://${w}/docs/..ok.txt`, 'read'],
];

function judge(t: Test, what: string, expect: Row[2], r: Answer): void {
  t.notOk(r.text.includes(MARK), `${what}: the denied file does not come back`);
  if (expect === 'read') {
    t.equal(r.isError, false, `${what}: no error`);
    t.match(r.text, /OK-TEXT/, `${what}: the server read the allowed file`);
  } else {
    t.equal(r.isError, true, `${what}: an error`);
    t.match(r.text, /mcp-roots-proxy refused /, `${what}: refused by the proxy`);
    t.match(r.text, expect, `${what}: ${r.text.slice(0, 300)}`);
  }
}

void t.test('file: URIs through the proxy', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['docs', 'vault/sub']) mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, 'vault/key.txt'), MARK);
  writeFileSync(join(w, 'vault/sub/k.txt'), MARK);
  writeFileSync(join(w, 'docs/ok.txt'), 'OK-TEXT');
  writeFileSync(join(w, 'docs/..ok.txt'), 'OK-TEXT');
  symlinkSync('../vault/sub', join(w, 'docs/lnk'));
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  shapes:\n    roots:\n      - path: ${w}\n    deny:\n      - ${w}/vault\n`,
    { dir },
  );
  const s = await startProxiedShapes(t, { server: 'shapes', socket: d.socket });

  for (const [what, uri, expect] of ROWS) {
    judge(t, `resources/read, ${what}`, expect, await s.read(uri(w)));
    judge(t, `format: uri, ${what}`, expect, await s.call('read_uri', { location: uri(w) }));
  }
  t.comment(`${ROWS.length} URIs, each in resources/read and in a format: uri argument`);
});
