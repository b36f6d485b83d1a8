/**
 * `equivalentPaths`: the paths a server may open in place of a missing one by taking an
 * equivalent name from disk, name by name (policies/equivalent-names.ts). Real directories.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import {
  equivalentPaths,
  matchKey,
  MAX_EQUIVALENT_PATHS,
  mayHaveEquivalent,
} from '../../policies/equivalent-names.js';
import { nodeFs } from '../../policies/fs.js';
import type { FsView } from '../../policies/model.js';
import { shortDir } from '../helpers/short-dir.js';

void t.test('the ASCII characters that other characters share a key with', (t) => {
  // Every code point outside ASCII whose key holds ASCII: `mayHaveEquivalent` must say yes to a
  // name holding that ASCII, or a directory holding the other spelling would go unread.
  const ascii = new Set<string>();
  for (let cp = 0x80; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    for (const ch of matchKey(String.fromCodePoint(cp))) if (ch.charCodeAt(0) < 0x80) ascii.add(ch);
  }
  t.same([...ascii].sort(), [' ', ';', 'K', '`'], 'this ICU maps only these four');
  for (const ch of ascii) t.ok(mayHaveEquivalent(`a${ch}b`), `a name with ${ch} is looked at`);
  t.notOk(mayHaveEquivalent('plain-name.txt'), 'other ASCII names have no equivalent');
  t.ok(mayHaveEquivalent('caf\u00e9'), 'a non-ASCII name may have one');
  t.equal(matchKey('a\u202fb\u00a0c'), 'a b c', 'space separators are spaces');
  t.equal(matchKey('cafe\u0301'), 'caf\u00e9', 'NFC');
  t.end();
});

void t.test('equivalent names on disk, level by level', async (t) => {
  const d = shortDir();
  mkdirSync(join(d, 'caf\u00e9', 'nai\u0308ve'), { recursive: true });
  mkdirSync(join(d, '\u212aeys'), { recursive: true });
  mkdirSync(join(d, 'my\u00a0shot'), { recursive: true });
  writeFileSync(join(d, 'plain.txt'), '');
  const fs = nodeFs();
  t.same(await equivalentPaths(fs, join(d, 'plain.txt')), [], 'an existing path has none');
  t.same(
    await equivalentPaths(fs, join(d, 'cafe\u0301', 'na\u00efve', 'x')),
    [join(d, 'caf\u00e9', 'na\u00efve', 'x'), join(d, 'caf\u00e9', 'nai\u0308ve', 'x')],
    'each name in the form on disk (or, where a server takes none, as written), the missing rest as written',
  );
  t.same(
    await equivalentPaths(fs, join(d, 'Keys', 'k.txt')),
    [join(d, '\u212aeys', 'k.txt')],
    'an ASCII name for its KELVIN SIGN twin',
  );
  t.same(
    await equivalentPaths(fs, join(d, 'cafe\u0301', 'new')),
    [join(d, 'caf\u00e9', 'new')],
    'below an equivalent, a missing name with no equivalent of its own is kept as written',
  );
  t.same(
    await equivalentPaths(fs, join(d, 'my shot', 'p.png')),
    [join(d, 'my\u00a0shot', 'p.png')],
    'a space for the no-break space on disk',
  );
  t.same(await equivalentPaths(fs, join(d, 'nothing', 'here')), [], 'nothing equivalent');
});

void t.test(
  'a directory is read only for a missing name that may have an equivalent',
  async (t) => {
    const d = shortDir();
    mkdirSync(join(d, 'sub'));
    const read: string[] = [];
    const inner = nodeFs();
    const fs: FsView = { ...inner, readdir: (p) => (read.push(p), inner.readdir(p)) };
    await equivalentPaths(fs, join(d, 'sub', 'new-file.txt'));
    t.same(read, [], 'an ASCII name without a space, K, ; or ` reads nothing');
    await equivalentPaths(fs, join(d, 'sub', 'Kelvin.txt'));
    t.same(read, [join(d, 'sub')], 'a name with K reads its directory');
  },
);

void t.test('too many equivalent paths is an answer of its own', async (t) => {
  // Two spellings of Å on disk at each of five levels, asked for with ANGSTROM SIGN: 32 paths.
  const d = shortDir();
  const forms = ['\u00c5', 'A\u030a'];
  let dirs = [d];
  for (let level = 0; level < 5; level++) {
    dirs = dirs.flatMap((p) => forms.map((f) => join(p, f)));
    for (const p of dirs) mkdirSync(p, { recursive: true });
  }
  const asked = join(d, ...Array.from({ length: 5 }, () => '\u212b'), 'f');
  t.equal(await equivalentPaths(nodeFs(), asked), 'too-many');
  t.ok(MAX_EQUIVALENT_PATHS < 32);
});
