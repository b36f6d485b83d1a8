/**
 * A refused policy, whatever refused it: the watcher does not load it again while its files stay
 * as they are (a reload on every look was an error logged each time, and a policy read from disk
 * each time), and it loads the fix once the files are mended, a missing include made included.
 * The watcher compares the files with what the last load looked at, refused or not
 * (daemon/policy-edits.ts `reloadIfEdited`, state.ts `lastLook`); in-process, looks where the
 * settle window would end (helpers/edit-state.ts).
 */
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  linkSync,
  mkdirSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { MAX_POLICY_FILES } from '../../policies/index.js';
import { editState, repoint } from '../helpers/edit-state.js';

const policy = (dir: string, roots: string[], head = '') =>
  `version: 1\n${head}servers:\n  fs:\n    roots:\n${roots
    .map((r) => `      - path: "${join(dir, r)}"\n`)
    .join('')}`;

const UNPARSABLE = 'version: 1\nservers: [oops\n';
/** Just under one file's size: nine of these pass what one policy may hold in all. */
const BIG = `version: 1\n#${'x'.repeat(1_000_000)}\n`;

interface Row {
  what: string;
  /** Files besides the main one (made first); returns the main file's text. */
  start?: (dir: string) => string;
  /** The edit that gets the policy refused. */
  refuse: (dir: string, main: string) => void;
  error: RegExp;
  /** The edit that mends it, and the roots then served. */
  mend: (dir: string, main: string) => void;
  roots: string[];
}

const ROWS: Row[] = [
  {
    what: 'the main file unparsable, a literal include in force',
    start: (dir) => {
      writeFileSync(join(dir, 'inc.yaml'), policy(dir, ['b']));
      return policy(dir, ['a'], 'include: ["inc.yaml"]\n');
    },
    refuse: (_dir, main) => writeFileSync(main, UNPARSABLE),
    error: /./,
    mend: (dir, main) => writeFileSync(main, policy(dir, ['a'], 'include: ["inc.yaml"]\n')),
    roots: ['a', 'b'],
  },
  {
    what: 'the main file unparsable, a glob include in force',
    start: (dir) => {
      mkdirSync(join(dir, 'inc'));
      writeFileSync(join(dir, 'inc', 'x.yaml'), policy(dir, ['b']));
      return policy(dir, ['a'], `include: ["${dir}/inc/*.yaml"]\n`);
    },
    refuse: (_dir, main) => writeFileSync(main, UNPARSABLE),
    error: /./,
    mend: (dir, main) =>
      writeFileSync(main, policy(dir, ['c'], `include: ["${dir}/inc/*.yaml"]\n`)),
    roots: ['b', 'c'],
  },
  {
    what: 'an include named before it is made',
    refuse: (dir, main) => writeFileSync(main, policy(dir, ['a'], 'include: ["new.yaml"]\n')),
    error: /new\.yaml does not exist/,
    mend: (dir) => writeFileSync(join(dir, 'new.yaml'), policy(dir, ['b'])),
    roots: ['a', 'b'],
  },
  {
    what: 'an include named before it is made, in a directory of its own',
    refuse: (dir, main) =>
      writeFileSync(main, policy(dir, ['a'], `include: ["${dir}/other/new.yaml"]\n`)),
    error: /new\.yaml does not exist/,
    mend: (dir) => (
      mkdirSync(join(dir, 'other')),
      writeFileSync(join(dir, 'other', 'new.yaml'), policy(dir, ['b']))
    ),
    roots: ['a', 'b'],
  },
  {
    what: 'an included file naming an include before it is made',
    start: (dir) => {
      writeFileSync(join(dir, 'i1.yaml'), policy(dir, ['b']));
      return policy(dir, ['a'], 'include: ["i1.yaml"]\n');
    },
    refuse: (dir) =>
      writeFileSync(join(dir, 'i1.yaml'), policy(dir, ['b'], 'include: ["i2.yaml"]\n')),
    error: /i2\.yaml does not exist/,
    mend: (dir) => writeFileSync(join(dir, 'i2.yaml'), policy(dir, ['c'])),
    roots: ['a', 'b', 'c'],
  },
  {
    what: 'an include added that does not parse',
    refuse: (dir, main) => {
      writeFileSync(join(dir, 'bad.yaml'), UNPARSABLE);
      writeFileSync(main, policy(dir, ['a'], 'include: ["bad.yaml"]\n'));
    },
    error: /./,
    mend: (dir) => writeFileSync(join(dir, 'bad.yaml'), policy(dir, ['b'])),
    roots: ['a', 'b'],
  },
  {
    what: 'an include that is a FIFO',
    refuse: (dir, main) => {
      execFileSync('mkfifo', [join(dir, 'f.yaml')]);
      writeFileSync(main, policy(dir, ['a'], 'include: ["f.yaml"]\n'));
    },
    error: /not a regular file/,
    mend: (dir) => (
      unlinkSync(join(dir, 'f.yaml')),
      writeFileSync(join(dir, 'f.yaml'), policy(dir, ['b']))
    ),
    roots: ['a', 'b'],
  },
  {
    what: `a glob include grown past ${MAX_POLICY_FILES} files`,
    start: (dir) => (
      mkdirSync(join(dir, 'inc')),
      policy(dir, ['a'], `include: ["${dir}/inc/*.yaml"]\n`)
    ),
    refuse: (dir) => {
      for (let i = 0; i < MAX_POLICY_FILES + 20; i++)
        writeFileSync(join(dir, 'inc', `f${i}.yaml`), 'version: 1\n');
    },
    error: new RegExp(`at most ${MAX_POLICY_FILES}`),
    mend: (dir) => {
      for (let i = 10; i < MAX_POLICY_FILES + 20; i++) unlinkSync(join(dir, 'inc', `f${i}.yaml`));
    },
    roots: ['a'],
  },
  {
    what: 'included files past what one policy may hold in all',
    start: (dir) => (
      mkdirSync(join(dir, 'inc')),
      policy(dir, ['a'], `include: ["${dir}/inc/*.yaml"]\n`)
    ),
    refuse: (dir) => {
      for (let i = 0; i < 10; i++) writeFileSync(join(dir, 'inc', `f${i}.yaml`), BIG);
    },
    error: /one policy may hold at most/,
    mend: (dir) => {
      for (let i = 0; i < 5; i++) unlinkSync(join(dir, 'inc', `f${i}.yaml`));
    },
    roots: ['a'],
  },
  {
    what: 'the main file over the size of one file',
    refuse: (dir, main) => writeFileSync(main, `${policy(dir, ['a'])}#${'x'.repeat(1_100_000)}\n`),
    error: /./,
    mend: (dir, main) => writeFileSync(main, policy(dir, ['b'])),
    roots: ['b'],
  },
  {
    what: 'the main file replaced by a directory',
    refuse: (_dir, main) => (rmSync(main), mkdirSync(main)),
    error: /is a directory/,
    mend: (dir, main) => (
      rmSync(main, { recursive: true }),
      writeFileSync(main, policy(dir, ['b']))
    ),
    roots: ['b'],
  },
  {
    what: 'a glob include blocked by a dangling link named like the glob',
    start: globStart,
    refuse: (dir) => symlinkSync(join(dir, 'nowhere'), join(dir, 'inc', '*.yaml')),
    error: /\*\.yaml does not exist/,
    mend: (dir) => unlinkSync(join(dir, 'inc', '*.yaml')),
    roots: ['a', 'b'],
  },
  {
    what: 'a glob include blocked by a directory named like the glob',
    start: globStart,
    refuse: (dir) => mkdirSync(join(dir, 'inc', '*.yaml')),
    error: /\*\.yaml is a directory/,
    mend: (dir) => rmdirSync(join(dir, 'inc', '*.yaml')),
    roots: ['a', 'b'],
  },
  {
    what: "an include of the daemon's own decision log",
    start: (dir) => (
      writeFileSync(join(dir, 'state', 'decisions.jsonl'), '{"kind":"start"}\n'),
      policy(dir, ['a'])
    ),
    refuse: (dir, main) =>
      writeFileSync(main, policy(dir, ['a'], 'include: ["state/decisions.jsonl"]\n')),
    error: /decisions\.jsonl is one of the daemon's own state files/,
    mend: (dir, main) => writeFileSync(main, policy(dir, ['b'])),
    roots: ['b'],
  },
  {
    what: "an include glob matching the daemon's own state files",
    start: (dir) => (
      writeFileSync(join(dir, 'state', 'decisions.jsonl'), '{"kind":"start"}\n'),
      policy(dir, ['a'])
    ),
    refuse: (dir, main) => writeFileSync(main, policy(dir, ['a'], 'include: ["state/*.jsonl"]\n')),
    error: /decisions\.jsonl is one of the daemon's own state files/,
    mend: (dir) => unlinkSync(join(dir, 'state', 'decisions.jsonl')),
    roots: ['a'],
  },
  {
    what: "an include that is a link re-pointed to the daemon's own decision log",
    start: (dir) => {
      writeFileSync(join(dir, 'state', 'decisions.jsonl'), '{"kind":"start"}\n');
      writeFileSync(join(dir, 'b.yaml'), policy(dir, ['b']));
      writeFileSync(join(dir, 'c.yaml'), policy(dir, ['c']));
      symlinkSync(join(dir, 'b.yaml'), join(dir, 'link.yaml'));
      return policy(dir, ['a'], 'include: ["link.yaml"]\n');
    },
    refuse: (dir) => repoint(join(dir, 'link.yaml'), join(dir, 'state', 'decisions.jsonl')),
    error: /link\.yaml is one of the daemon's own state files/,
    // Only where the name leads says the include is mended: no file the load read changed.
    mend: (dir) => repoint(join(dir, 'link.yaml'), join(dir, 'c.yaml')),
    roots: ['a', 'c'],
  },
  {
    what: "an include that is a hard link of the daemon's own decision log",
    start: (dir) => (
      writeFileSync(join(dir, 'state', 'decisions.jsonl'), '{"kind":"start"}\n'),
      policy(dir, ['a'])
    ),
    refuse: (dir, main) => {
      linkSync(join(dir, 'state', 'decisions.jsonl'), join(dir, 'h.yaml'));
      writeFileSync(main, policy(dir, ['a'], 'include: ["h.yaml"]\n'));
    },
    error: /h\.yaml is one of the daemon's own state files/,
    mend: (dir) => (
      rmSync(join(dir, 'h.yaml')),
      writeFileSync(join(dir, 'h.yaml'), policy(dir, ['b']))
    ),
    roots: ['a', 'b'],
  },
  {
    what: "the grants file a link to the daemon's own decision log",
    start: (dir) => (
      writeFileSync(join(dir, 'state', 'decisions.jsonl'), '{"kind":"start"}\n'),
      policy(dir, ['a'])
    ),
    refuse: (dir) => symlinkSync('decisions.jsonl', join(dir, 'state', 'grants.yaml')),
    error: /grants\.yaml is one of the daemon's own state files/,
    mend: (dir) => rmSync(join(dir, 'state', 'grants.yaml')),
    roots: ['a'],
  },
  {
    what: 'the grants file unparsable',
    refuse: (dir) => writeFileSync(join(dir, 'state', 'grants.yaml'), UNPARSABLE),
    error: /./,
    mend: (dir) => rmSync(join(dir, 'state', 'grants.yaml')),
    roots: ['a'],
  },
];

/** A glob include in force: `inc/*.yaml`, with one file serving `b`. */
function globStart(dir: string): string {
  mkdirSync(join(dir, 'inc'));
  writeFileSync(join(dir, 'inc', 'x.yaml'), policy(dir, ['b']));
  return policy(dir, ['a'], `include: ["${dir}/inc/*.yaml"]\n`);
}

for (const row of ROWS) {
  void t.test(row.what, async (t) => {
    const s = await editState(t, (dir) => {
      for (const d of ['a', 'b', 'c']) mkdirSync(join(dir, d));
      return row.start?.(dir) ?? policy(dir, ['a']);
    });
    t.same(s.state.errors, [], 'valid at start');
    t.equal(await s.look(), false, 'nothing to reload at start');
    row.refuse(s.dir, s.configFile);
    t.equal(await s.look(), true, 'the edit reloads');
    t.match(s.state.errors[0]?.message, row.error, 'refused');
    t.equal(await s.look(), false, 'nothing changed: no reload');
    // The daemon logs every refusal: its own files change; nothing a load read does.
    appendFileSync(join(s.dir, 'state', 'decisions.jsonl'), '{"kind":"policy-rejected"}\n');
    t.equal(await s.look(), false, 'and again none');
    row.mend(s.dir, s.configFile);
    t.equal(await s.look(), true, 'the fix reloads');
    t.same(s.state.errors, [], 'and is in force');
    t.same(s.roots(), row.roots.map((r) => join(s.dir, r)).sort());
    t.equal(await s.look(), false, 'then nothing more');
  });
}

void t.test('refused at start for an include not made yet: making it loads it', async (t) => {
  const s = await editState(t, (dir) => policy(dir, ['a'], 'include: ["new.yaml"]\n'));
  t.match(s.state.errors[0]?.message, /does not exist/);
  t.equal(await s.look(), false, 'nothing to reload while it is missing');
  for (const d of ['a', 'b']) mkdirSync(join(s.dir, d));
  writeFileSync(join(s.dir, 'new.yaml'), policy(s.dir, ['b']));
  t.equal(await s.look(), true, 'made: a reload');
  t.same(s.state.errors, []);
  t.same(s.roots(), [join(s.dir, 'a'), join(s.dir, 'b')]);
});

void t.test('a policy that includes the grants file', async (t) => {
  const s = await editState(t, (dir) => {
    for (const d of ['a', 'b', 'c']) mkdirSync(join(dir, d));
    writeFileSync(join(dir, 'state', 'grants.yaml'), policy(dir, ['b']));
    return policy(dir, ['a'], 'include: ["state/grants.yaml"]\n');
  });
  t.same(s.roots(), [join(s.dir, 'a'), join(s.dir, 'b')]);
  t.equal(await s.look(), false, 'nothing changed: no reload');
  t.equal(await s.look(), false, 'and again none');
  writeFileSync(s.grantsFile, policy(s.dir, ['c']));
  t.equal(await s.look(), true, 'an edit of it reloads');
  t.same(s.roots(), [join(s.dir, 'a'), join(s.dir, 'c')]);
  t.equal(await s.look(), false, 'then nothing more');
});
