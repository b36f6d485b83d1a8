/**
 * Names that are not UTF-8 must not stand for other entries. Node reads the byte 0xFF (and any
 * byte that is not UTF-8) as U+FFFD, and so reads a name really spelled with U+FFFD: beside one
 * another, both entries read as the same name, and the decoded path names only the second. What a
 * process with a writable glob base can plant: a directory named by the byte beside a link,
 * named U+FFFD, to somewhere the glob does not grant. Each row plants a pair, before the daemon
 * starts (the full walk) and after (the event path); every listed root must then be its own
 * canonical path, of the glob's kind, inside the glob's base, and the real U+FFFD name alone is
 * still a root.
 */
import { mkdirSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import type { RootsClient } from '../../protocol/client.js';
import { startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';

const FFFD = '\uFFFD';
/** A path whose last name is the byte 0xFF after `dir`. */
const byteName = (dir: string, suffix = ''): Buffer =>
  Buffer.concat([Buffer.from(`${dir}/`), Buffer.from([0xff]), Buffer.from(suffix)]);

interface Row {
  name: string;
  /** Plant the pair under `b` (a glob base), with `out` outside every root. */
  plant(b: string, out: string): void;
  /** Roots (below the base, `/`-joined) that must be listed, besides the control `ok`. */
  listed: string[];
}

const rows: Row[] = [
  {
    name: 'byte-named directory beside a U+FFFD link out',
    plant: (b, out) => {
      mkdirSync(byteName(b));
      symlinkSync(out, join(b, FFFD));
    },
    listed: [],
  },
  {
    name: 'U+FFFD link out first, then the byte-named directory',
    plant: (b, out) => {
      symlinkSync(out, join(b, FFFD));
      mkdirSync(byteName(b));
    },
    listed: [],
  },
  {
    name: 'byte-named directory beside a U+FFFD file',
    plant: (b) => {
      mkdirSync(byteName(b));
      writeFileSync(join(b, FFFD), 'a file, not a directory');
    },
    listed: [],
  },
  {
    name: 'byte-named link out beside a real U+FFFD directory',
    plant: (b, out) => {
      symlinkSync(out, byteName(b));
      mkdirSync(join(b, `${FFFD}`));
    },
    listed: [FFFD],
  },
  {
    name: 'two byte-named directories (0xFF, 0xFE) beside a U+FFFD link out',
    plant: (b, out) => {
      mkdirSync(byteName(b));
      mkdirSync(Buffer.concat([Buffer.from(`${b}/`), Buffer.from([0xfe])]));
      symlinkSync(out, join(b, FFFD));
    },
    listed: [],
  },
  {
    name: 'a name with U+FFFD inside it (a\\xffb beside a link aU+FFFDb)',
    plant: (b, out) => {
      mkdirSync(Buffer.concat([Buffer.from(`${b}/a`), Buffer.from([0xff]), Buffer.from('b')]));
      symlinkSync(out, join(b, `a${FFFD}b`));
    },
    listed: [],
  },
];

/** Every root of `server`, checked against the invariants; returns the names below `base`. */
async function rootsBelow(c: RootsClient, server: string, base: string): Promise<string[]> {
  const { roots } = await c.listRoots(server);
  return roots.map((r) => {
    const p = fileURLToPath(r.uri);
    if (realpathSync(p) !== p) throw new Error(`${r.uri} resolves to ${realpathSync(p)}`);
    if (!statSync(p).isDirectory()) throw new Error(`${r.uri} is not a directory`);
    if (!p.startsWith(`${base}/`)) throw new Error(`${r.uri} is outside ${base}`);
    return p.slice(base.length + 1);
  });
}

for (const when of ['before start', 'after start'] as const) {
  void t.test(when, async (t) => {
    const td = await startDaemon(t, undefined);
    const w = realpathSync(td.dir);
    const out = join(w, 'outside');
    mkdirSync(join(out, 'x'), { recursive: true });
    writeFileSync(join(out, 'x', 's.txt'), 'secret');
    const bases = rows.map((_, i) => join(w, `b${i}`));
    for (const b of bases) mkdirSync(join(b, 'ok', 'x'), { recursive: true });
    if (when === 'before start') rows.forEach((r, i) => r.plant(bases[i]!, out));
    const entries = bases.map((b, i) => `  s${i}:\n    roots:\n      - path: ${b}/*\n`).join('');
    const deep = bases.map((b, i) => `  d${i}:\n    roots:\n      - path: ${b}/*/x\n`).join('');
    td.writePolicy(`version: 1\nservers:\n${entries}${deep}`);
    const c = await td.connect();
    await waitFor(async () => (await c.listRoots('s0')).roots.length > 0, 30_000, 'first list');
    if (when === 'after start') {
      rows.forEach((r, i) => r.plant(bases[i]!, out));
      // A marker planted last: once it is listed, the events before it were seen.
      for (const b of bases) mkdirSync(join(b, 'z', 'x'), { recursive: true });
    }
    const marker = when === 'after start' ? ['z'] : [];
    for (const [i, row] of rows.entries()) {
      const want = ['ok', ...marker, ...row.listed].sort();
      await waitFor(
        async () =>
          JSON.stringify((await rootsBelow(c, `s${i}`, bases[i]!)).sort()) === JSON.stringify(want),
        30_000,
        `${row.name}: roots ${want.join(', ')}`,
      );
      t.same(
        (await rootsBelow(c, `d${i}`, bases[i]!)).sort(),
        ['ok/x', ...marker.map((m) => `${m}/x`)].sort(),
        `${row.name}: deep glob`,
      );
      const check = await c.check(`d${i}`, join(bases[i]!, FFFD, 'x', 's.txt'), 'read');
      t.equal(check.allowed, false, `${row.name}: the link's target is refused`);
    }
  });
}
