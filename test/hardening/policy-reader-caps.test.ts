/**
 * How much one policy may make the daemon read. An include glob matching thousands of files, or
 * many files of up to 1 MiB each, made every load, and every edit anywhere in the policy's
 * directories (the edit fingerprint, the settle-window parse), read them all at once. One policy
 * may read at most MAX_POLICY_FILES files and MAX_POLICY_TOTAL_BYTES bytes: past either, the
 * policy is an error at the include that took it there, and the last good policy keeps serving;
 * the fingerprint reads no more than that, a few files at a time.
 */
import { appendFileSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { fingerprint, MISSING } from '../../daemon/watch-policy.js';
import {
  mapBounded,
  MAX_POLICY_FILES,
  MAX_POLICY_TOTAL_BYTES,
  POLICY_READS_IN_FLIGHT,
} from '../../policies/index.js';
import { rootsctl } from '../helpers/cli.js';
import { startDaemon } from '../helpers/daemon.js';
import { editState } from '../helpers/edit-state.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

/** `n` small policy files `<dir>/<sub>/NNNN.yaml`. */
function manyFiles(dir: string, sub: string, n: number, text = 'version: 1\n'): void {
  mkdirSync(join(dir, sub), { recursive: true });
  for (let i = 0; i < n; i++)
    writeFileSync(join(dir, sub, `${String(i).padStart(4, '0')}.yaml`), text);
}

/** A valid policy file of `size` bytes: `version: 1` and a comment. */
function sized(size: number): string {
  const head = 'version: 1\n#';
  return `${head}${'x'.repeat(size - head.length - 1)}\n`;
}

const MiB = 1024 * 1024;
/** Files just under the size one file may have: nine of them pass MAX_POLICY_TOTAL_BYTES. */
const BIG = 1_000_000;

interface CapRow {
  what: string;
  /** Files under `dir`; returns the main file's text. */
  setup: (dir: string) => string;
  /** The error's position in `file:line:col` (relative to dir), or undefined when valid. */
  at?: string;
  says?: RegExp;
}

const FILES = new RegExp(`one policy may read at most ${MAX_POLICY_FILES}`);
const BYTES = new RegExp(`one policy may hold at most ${MAX_POLICY_TOTAL_BYTES / MiB}\\.0 MiB`);

const ROWS: CapRow[] = [
  {
    what: `a glob of ${MAX_POLICY_FILES - 1} files (the cap, with the main file)`,
    setup: (dir) => (
      manyFiles(dir, 'd', MAX_POLICY_FILES - 1),
      'version: 1\ninclude: [d/*.yaml]\n'
    ),
  },
  {
    what: `a glob of ${MAX_POLICY_FILES} files`,
    setup: (dir) => (manyFiles(dir, 'd', MAX_POLICY_FILES), 'version: 1\ninclude: [d/*.yaml]\n'),
    at: 'mcp-roots.yaml:2:11',
    says: FILES,
  },
  {
    what: 'a glob of 3,000 files',
    setup: (dir) => (manyFiles(dir, 'd', 3000), 'version: 1\ninclude: [d/*.yaml]\n'),
    at: 'mcp-roots.yaml:2:11',
    says: FILES,
  },
  {
    what: 'two globs, each under the cap, past it together',
    setup: (dir) => {
      manyFiles(dir, 'a', 200);
      manyFiles(dir, 'b', 100);
      return 'version: 1\ninclude:\n  - a/*.yaml\n  - b/*.yaml\n';
    },
    at: 'mcp-roots.yaml:4:5',
    says: FILES,
  },
  {
    what: 'a glob in an included file',
    setup: (dir) => {
      manyFiles(dir, 'd', 400);
      writeFileSync(join(dir, 'inc.yaml'), 'version: 1\n\ninclude: [d/*.yaml]\n');
      return 'version: 1\ninclude: [inc.yaml]\n';
    },
    at: 'inc.yaml:3:11',
    says: FILES,
  },
  {
    what: `a chain of ${MAX_POLICY_FILES + 20} files, each including the next`,
    setup: (dir) => {
      const n = MAX_POLICY_FILES + 20;
      for (let i = 0; i < n; i++)
        writeFileSync(join(dir, `c${i}.yaml`), `version: 1\ninclude: [c${i + 1}.yaml]\n`);
      writeFileSync(join(dir, `c${n}.yaml`), 'version: 1\n');
      return 'version: 1\ninclude: [c0.yaml]\n';
    },
    at: `c${MAX_POLICY_FILES - 2}.yaml:2:11`,
    says: FILES,
  },
  {
    what: `${MAX_POLICY_FILES + 50} links to one file in a glob`,
    setup: (dir) => {
      mkdirSync(join(dir, 'd'));
      writeFileSync(join(dir, 'd', 'all.yaml'), 'version: 1\n');
      for (let i = 0; i < MAX_POLICY_FILES + 50; i++)
        symlinkSync('all.yaml', join(dir, 'd', `l${i}.yaml`));
      return 'version: 1\ninclude: [d/*.yaml]\n';
    },
    at: 'mcp-roots.yaml:2:11',
    says: FILES,
  },
  {
    what: 'eight files of 1,000,000 bytes',
    setup: (dir) => (manyFiles(dir, 'd', 8, sized(BIG)), 'version: 1\ninclude: [d/*.yaml]\n'),
  },
  {
    what: 'nine files of 1,000,000 bytes',
    setup: (dir) => (manyFiles(dir, 'd', 9, sized(BIG)), 'version: 1\ninclude: [d/*.yaml]\n'),
    at: 'mcp-roots.yaml:2:11',
    says: BYTES,
  },
  {
    what: 'one file of 1,000,000 bytes reached nine times',
    setup: (dir) => {
      writeFileSync(join(dir, 'big.yaml'), sized(BIG));
      const names = Array.from({ length: 9 }, (_, i) => `l${i}.yaml`);
      for (const n of names) symlinkSync('big.yaml', join(dir, n));
      return `version: 1\ninclude:\n${names.map((n) => `  - ${n}\n`).join('')}`;
    },
    at: 'mcp-roots.yaml:11:5',
    says: BYTES,
  },
];

void t.test('caps on what one policy may read, through rootsctl validate', async (t) => {
  for (const row of ROWS) {
    await t.test(row.what, async (t) => {
      const dir = ownedShortDir(t);
      const main = join(dir, 'mcp-roots.yaml');
      writeFileSync(main, row.setup(dir));
      const r = await rootsctl(['validate', main]);
      if (row.at === undefined) {
        t.equal(r.code, 0, `valid (${(r.out + r.err).slice(0, 300)})`);
        return;
      }
      t.equal(r.code, 1, 'invalid');
      const lines = (r.out + r.err).split('\n').filter((l) => l.startsWith('error'));
      t.equal(lines.length, 1, `one error: ${lines.join(' | ').slice(0, 500)}`);
      t.match(lines[0], `${join(dir, row.at)}: include: `, 'at the include that took it past');
      t.match(lines[0], row.says!, 'says which cap');
    });
  }
});

void t.test('the daemon keeps its last good policy while an include is past a cap', async (t) => {
  const dir = ownedShortDir(t);
  mkdirSync(join(dir, 'home'));
  mkdirSync(join(dir, 'w'));
  manyFiles(dir, 'd', 10);
  writeFileSync(
    join(dir, 'd', 'roots.yaml'),
    `version: 1\nservers:\n  fs:\n    roots: [{path: ${dir}/w}]\n`,
  );
  const d = await startDaemon(t, 'version: 1\ninclude: [d/*.yaml]\n', { dir });
  const c = await d.connect();
  const uris = async () => (await c.listRoots('fs')).roots.map((r) => r.uri);
  t.same(await uris(), [`file://${dir}/w`], 'serves w');

  // Past the file cap, by files added to the glob: the watch reloads, the load refuses.
  for (let i = 10; i < MAX_POLICY_FILES + 40; i++)
    writeFileSync(join(dir, 'd', `${String(i).padStart(4, '0')}.yaml`), 'version: 1\n');
  await waitFor(
    async () => (await c.status()).policy.errors.some((e) => FILES.test(e.message)),
    60_000,
    'the file cap reported',
  );
  const e = (await c.status()).policy.errors[0]!;
  t.same([e.file, e.line, e.column], [d.config, 2, 11], 'at the include');
  t.same(await uris(), [`file://${dir}/w`], 'the last good policy serves');

  // Back under it, with the root moved: served at once.
  for (let i = 10; i < MAX_POLICY_FILES + 40; i++)
    rmSync(join(dir, 'd', `${String(i).padStart(4, '0')}.yaml`));
  mkdirSync(join(dir, 'w2'));
  writeFileSync(
    join(dir, 'd', 'roots.yaml'),
    `version: 1\nservers:\n  fs:\n    roots: [{path: ${dir}/w2}]\n`,
  );
  await waitFor(async () => (await uris())[0] === `file://${dir}/w2`, 60_000, 'w2 served');
  t.same((await c.status()).policy.errors, [], 'no errors');

  // Past the byte cap, by files growing: refused the same way.
  for (let i = 0; i < 9; i++)
    writeFileSync(join(dir, 'd', `${String(i).padStart(4, '0')}.yaml`), sized(BIG));
  await waitFor(
    async () => (await c.status()).policy.errors.some((e) => BYTES.test(e.message)),
    60_000,
    'the byte cap reported',
  );
  t.same(await uris(), [`file://${dir}/w2`], 'the last good policy serves');
});

void t.test('the edit fingerprint reads no more than the caps allow', async (t) => {
  await t.test(`a glob of 3,000 files: only what the refused load read is read`, async (t) => {
    const s = await editState(t, (dir) => {
      manyFiles(dir, 'd', 3000);
      return `version: 1\ninclude: ["${dir}/d/*.yaml"]\n`;
    });
    t.match(s.state.errors[0]?.message, FILES, 'refused at start');
    const look = s.state.lastLook('policy');
    t.same([...look.files.keys()], [s.configFile], 'the load read the main file alone');
    t.equal(look.globs[0]?.matches.length, 3000, 'and saw what its glob matched');
    const reads = new Map();
    const print = await fingerprint(look.files.keys(), reads);
    t.same([...reads.keys()], [s.configFile], 'a look reads that file, no more');
    t.equal(print.size, 1);
    t.equal(await s.look(), false, 'nothing changed: no reload, and no error again');
    writeFileSync(join(s.dir, 'd', '3000.yaml'), 'version: 1\n');
    t.equal(await s.look(), true, 'a file more in the glob: a reload');
    t.equal(await s.look(), false, 'then nothing more');
  });

  await t.test('twelve files of 1,000,000 bytes: read up to the byte cap', async (t) => {
    const dir = ownedShortDir(t);
    manyFiles(dir, 'd', 12, sized(BIG));
    const files = Array.from({ length: 12 }, (_, i) =>
      join(dir, 'd', `${String(i).padStart(4, '0')}.yaml`),
    );
    const before = await fingerprint(files);
    const unread = [...before].filter(([, h]) => h.startsWith('over-cap:')).map(([f]) => f);
    // The budget is what one load may read: 8 MiB and the file that passes it, nine of these.
    t.equal(unread.length, 3, 'the files past the byte cap are not read');
    const sameAgain = await fingerprint(files);
    t.same([...sameAgain], [...before], 'the fingerprint is the same while nothing changes');
    appendFileSync(unread[0]!, '#\n');
    const after = await fingerprint(files);
    t.not(after.get(unread[0]!), before.get(unread[0]!), 'an edit of an unread file is seen');
    t.equal(after.get(join(dir, 'missing.yaml')), undefined);
    t.equal(
      (await fingerprint([join(dir, 'missing.yaml')])).get(join(dir, 'missing.yaml')),
      MISSING,
    );
  });

  await t.test("a file over one file's size costs nothing of the budget", async (t) => {
    const dir = ownedShortDir(t);
    manyFiles(dir, 'd', 9, sized(BIG));
    writeFileSync(join(dir, 'd', 'huge.yaml'), sized(3 * MiB));
    const print = await fingerprint([
      ...Array.from({ length: 9 }, (_, i) => join(dir, 'd', `${String(i).padStart(4, '0')}.yaml`)),
      join(dir, 'd', 'huge.yaml'),
    ]);
    t.equal(
      print.get(join(dir, 'd', 'huge.yaml')),
      'unreadable:EFBIG',
      'refused as a load refuses it',
    );
    t.same(
      [...print.values()].filter((h) => h.startsWith('over-cap:')),
      [],
      'the nine are read',
    );
  });
});

void t.test('mapBounded keeps at most its limit in flight, in order', async (t) => {
  let inFlight = 0;
  let most = 0;
  const release: (() => void)[] = [];
  const items = Array.from({ length: 40 }, (_, i) => i);
  const done = mapBounded(items, POLICY_READS_IN_FLIGHT, async (i) => {
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise<void>((r) => release.push(r));
    inFlight--;
    return i * 2;
  });
  // Release the waiting calls one at a time, each once it has started.
  for (let n = 0; n < items.length; n++) {
    await waitFor(() => release.length > 0, 10_000, 'a call waiting');
    release.shift()!();
  }
  t.same(
    await done,
    items.map((i) => i * 2),
    'answers in the items order',
  );
  t.equal(most, POLICY_READS_IN_FLIGHT, `at most ${POLICY_READS_IN_FLIGHT} at once`);
});
