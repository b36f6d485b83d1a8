/**
 * Boundary attacks through the enforcing proxy. A real daemon, the real proxy and
 * the real `@modelcontextprotocol/server-filesystem`, driven by an SDK Client as the host. Every
 * forbidden file holds a marker; a row passes when the marker never comes back and the proxy (or,
 * for a path that names nothing outside the policy, the server) refuses.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, startProxiedFs, waitFor } from '../helpers/proxy.js';

/** Content of every file the agent must never read; a leak shows up as this text in a result. */
const MARK = {
  secret: 'MARK-SECRET-denied',
  cafe: 'MARK-CAFE-denied-nfc',
  outside: 'MARK-OUTSIDE-no-root',
  evil: 'MARK-EVIL-prefix-sibling',
  ro: 'MARK-RO-readonly',
} as const;
const LEAKS = Object.values(MARK);

/** `café` spelled composed (NFC) and decomposed (NFD). */
const CAFE_NFC = 'caf\u00e9';
const CAFE_NFD = 'cafe\u0301';
const NAIVE_NFC = 'na\u00efve';
const NAIVE_NFD = 'nai\u0308ve';

function makeWorkspace(w: string): void {
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

function policy(w: string): string {
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
type Expect = 'proxy' | 'contained';

interface Row {
  what: string;
  tool: string;
  args: (w: string) => Record<string, unknown>;
  expect: Expect;
  /** The refusal text must match this. */
  why?: RegExp;
  /** Paths (relative to the workspace) that must not exist afterwards. */
  absent?: string[];
}

const read = (p: (w: string) => string) => (w: string) => ({ path: p(w) });

const ROWS: Row[] = [
  // .. segments
  {
    what: '.. segment',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/../outside/o.txt`),
    expect: 'proxy',
    why: /\.\. segment/,
  },
  {
    what: '.. out of a denied dir',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/sub/../secret/s.txt`),
    expect: 'proxy',
    why: /\.\. segment/,
  },
  {
    what: 'trailing ..',
    tool: 'list_directory',
    args: read((w) => `${w}/alpha/..`),
    expect: 'proxy',
    why: /\.\. segment/,
  },
  // URL encoding in a plain path: a server that decodes paths would read another one
  {
    what: '%2e%2e in a path',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/%2e%2e/outside/o.txt`),
    expect: 'proxy',
    why: /%2e, %2f, %5c or %00/,
  },
  {
    what: '%2E%2E%2F in a path',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/%2E%2E%2Foutside%2Fo.txt`),
    expect: 'proxy',
    why: /%2e, %2f, %5c or %00/,
  },
  // file:// URIs in a path argument: the server would read them as relative paths
  {
    what: 'file:// URI outside',
    tool: 'read_text_file',
    args: read((w) => `file://${w}/outside/o.txt`),
    expect: 'proxy',
  },
  {
    what: 'file:// URI with a host',
    tool: 'read_text_file',
    args: read((w) => `file://evil${w}/alpha/a.txt`),
    expect: 'proxy',
    why: /not a valid file URI/,
  },
  {
    what: 'file://localhost URI',
    tool: 'read_text_file',
    args: read((w) => `file://localhost${w}/outside/o.txt`),
    expect: 'proxy',
  },
  {
    what: 'file:// URI with %2e%2e',
    tool: 'read_text_file',
    args: read((w) => `file://${w}/alpha/%2e%2e/outside/o.txt`),
    expect: 'proxy',
    why: /dot segment/,
  },
  {
    what: 'file:// URI with %2F',
    tool: 'read_text_file',
    args: read((w) => `file://${w}/alpha%2Fsecret/s.txt`),
    expect: 'proxy',
    why: /not a valid file URI/,
  },
  {
    what: 'file:// URI of an allowed dir, to create (the server resolves it under its first root)',
    tool: 'create_directory',
    args: read((w) => `file://${w}/alpha/made-by-uri`),
    expect: 'proxy',
    absent: ['a-ro/file:', 'alpha/file:'],
  },
  // Unicode look-alikes
  {
    what: 'fullwidth solidus',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha\uff0f..\uff0foutside/o.txt`),
    expect: 'proxy',
    why: /outside every root/,
  },
  {
    what: 'fullwidth full stops as ..',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/\uff0e\uff0e/outside/o.txt`),
    expect: 'contained',
  },
  {
    what: 'one-dot leader and combining mark as ..',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/\u2024\u2024/secret/s.txt`),
    expect: 'contained',
  },
  {
    what: 'NFD spelling of a denied NFC directory',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/${CAFE_NFD}/c.txt`),
    expect: 'proxy',
    why: /denied/,
  },
  {
    what: 'NFD spelling of a denied NFC directory, listing',
    tool: 'list_directory',
    args: read((w) => `${w}/alpha/${CAFE_NFD}`),
    expect: 'proxy',
    why: /denied/,
  },
  {
    what: 'NFD spelling of a denied NFC directory, writing',
    tool: 'write_file',
    args: (w) => ({ path: `${w}/alpha/${CAFE_NFD}/c.txt`, content: 'overwritten' }),
    expect: 'proxy',
    why: /denied/,
  },
  {
    what: 'NFD spelling of an NFC root',
    tool: 'read_text_file',
    args: read((w) => `${w}/${NAIVE_NFD}/n.txt`),
    expect: 'proxy',
    why: /outside every root/,
  },
  // case variants on a case-sensitive filesystem
  {
    what: 'upper-case /TMP',
    tool: 'read_text_file',
    args: read((w) => `${w.toUpperCase()}/outside/o.txt`),
    expect: 'proxy',
    why: /outside every root/,
  },
  {
    what: 'upper-case root name',
    tool: 'read_text_file',
    args: read((w) => `${w}/ALPHA/secret/s.txt`),
    expect: 'proxy',
    why: /outside every root/,
  },
  {
    what: 'upper-case denied name inside a root',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/SECRET/s.txt`),
    expect: 'contained',
  },
  // separators
  {
    what: 'trailing slash on a denied dir',
    tool: 'list_directory',
    args: read((w) => `${w}/alpha/secret/`),
    expect: 'proxy',
    why: /denied/,
  },
  {
    what: 'trailing /. on a denied dir',
    tool: 'list_directory',
    args: read((w) => `${w}/alpha/secret/.`),
    expect: 'proxy',
    why: /denied/,
  },
  {
    what: 'doubled slashes',
    tool: 'read_text_file',
    args: read((w) => `/${w}//alpha//secret//s.txt`),
    expect: 'proxy',
    why: /denied/,
  },
  {
    what: 'backslashes',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha\\..\\outside\\o.txt`),
    expect: 'proxy',
    why: /backslash/,
  },
  {
    what: 'trailing space',
    tool: 'read_text_file',
    args: read((w) => `${w}/outside/o.txt `),
    expect: 'proxy',
    why: /ends with white space/,
  },
  {
    what: 'leading space',
    tool: 'read_text_file',
    args: read((w) => ` ${w}/outside/o.txt`),
    expect: 'proxy',
    why: /relative path/,
  },
  {
    what: 'quoted path (the server strips quotes when it compares)',
    tool: 'read_text_file',
    args: read((w) => `"${w}/outside/o.txt"`),
    expect: 'proxy',
    why: /relative path/,
  },
  // NUL bytes
  {
    what: 'NUL byte',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/a.txt\0${w}/outside/o.txt`),
    expect: 'proxy',
    why: /NUL/,
  },
  {
    what: 'NUL byte after a denied file',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/secret/s.txt\0`),
    expect: 'proxy',
  },
  // length
  {
    what: 'path longer than PATH_MAX',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/${'d/'.repeat(2100)}x`),
    expect: 'proxy',
    why: /ENAMETOOLONG/,
  },
  {
    what: 'name longer than NAME_MAX, to write',
    tool: 'write_file',
    args: (w) => ({ path: `${w}/alpha/${'n'.repeat(300)}`, content: 'x' }),
    expect: 'proxy',
    why: /ENAMETOOLONG/,
  },
  // relative, ~, Windows shapes
  {
    what: 'relative path',
    tool: 'read_text_file',
    args: read(() => 'alpha/a.txt'),
    expect: 'proxy',
    why: /relative path/,
  },
  {
    what: 'dot-relative path',
    tool: 'read_text_file',
    args: read(() => './outside/o.txt'),
    expect: 'proxy',
    why: /relative path/,
  },
  {
    what: 'empty path',
    tool: 'list_directory',
    args: read(() => ''),
    expect: 'proxy',
    why: /empty path/,
  },
  {
    what: '~',
    tool: 'list_directory',
    args: read(() => '~'),
    expect: 'proxy',
    why: /starts with ~/,
  },
  {
    what: '~user',
    tool: 'read_text_file',
    args: read(() => '~root/.bashrc'),
    expect: 'proxy',
    why: /starts with ~/,
  },
  {
    what: 'Windows drive path',
    tool: 'read_text_file',
    args: read(() => 'C:\\Windows\\win.ini'),
    expect: 'proxy',
    why: /relative path/,
  },
  // symlinks and prefixes
  {
    what: 'symlink out of a root',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/link-out/o.txt`),
    expect: 'proxy',
    why: /outside every root/,
  },
  {
    what: 'symlink into a denied dir',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/to-secret/s.txt`),
    expect: 'proxy',
    why: /denied/,
  },
  {
    what: 'write through a dangling symlink pointing outside',
    tool: 'write_file',
    args: (w) => ({ path: `${w}/alpha/dangling`, content: 'x' }),
    expect: 'proxy',
    why: /outside every root/,
    absent: ['outside/new.txt'],
  },
  {
    what: 'sibling sharing a prefix',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha-evil/e.txt`),
    expect: 'proxy',
    why: /outside every root/,
  },
  // several paths, writes
  {
    what: 'one bad path among good ones',
    tool: 'read_multiple_files',
    args: (w) => ({ paths: [`${w}/alpha/a.txt`, `${w}/alpha/secret/s.txt`] }),
    expect: 'proxy',
    why: /denied/,
  },
  {
    what: 'write into a read-only root',
    tool: 'write_file',
    args: (w) => ({ path: `${w}/a-ro/w.txt`, content: 'x' }),
    expect: 'proxy',
    why: /read-only/,
    absent: ['a-ro/w.txt'],
  },
  {
    what: 'move a denied dir away',
    tool: 'move_file',
    args: (w) => ({ source: `${w}/alpha/secret`, destination: `${w}/alpha/public` }),
    expect: 'proxy',
    why: /denied/,
    absent: ['alpha/public'],
  },
  {
    what: 'move the parent of a denied dir',
    tool: 'move_file',
    args: (w) => ({ source: `${w}/alpha`, destination: `${w}/alpha2` }),
    expect: 'proxy',
    absent: ['alpha2'],
  },
];

void t.test('boundary attacks through the enforcing proxy', async (t) => {
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

  let refusedByProxy = 0;
  for (const row of ROWS) {
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
  t.comment(`${ROWS.length} attack rows, ${refusedByProxy} refused by the proxy`);
  t.same(readdirSync(join(w, 'a-ro')), ['r.txt'], 'the read-only root is untouched');

  await t.test(
    'a symlink swapped between calls is judged where it points at check time',
    async (t) => {
      const link = `${w}/alpha/swap`;
      t.same(await fs.call('read_text_file', { path: `${link}/s.txt` }), {
        text: 'sub ok',
        isError: false,
      });
      const swapTo = (target: string) => {
        symlinkSync(target, `${link}.new`);
        renameSync(`${link}.new`, link);
      };
      swapTo(`${w}/alpha/secret`);
      let r = await fs.call('read_text_file', { path: `${link}/s.txt` });
      t.match(r.text, /^mcp-roots-proxy refused .*denied/, 'pointed at a denied dir: refused');
      swapTo(`${w}/outside`);
      r = await fs.call('read_text_file', { path: `${link}/o.txt` });
      t.match(r.text, /^mcp-roots-proxy refused .*outside every root/, 'pointed outside: refused');
      swapTo(`${w}/alpha/sub`);
      t.same(await fs.call('read_text_file', { path: `${link}/s.txt` }), {
        text: 'sub ok',
        isError: false,
      });
    },
  );
});
