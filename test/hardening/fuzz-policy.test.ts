/**
 * Mutated policies (character edits, deleted, duplicated and swapped lines,
 * type swaps, indentation, truncation at every Nth byte) through the parser, `rootsctl validate`
 * and live reloads of a daemon. Every result is valid or has errors with a position in the file;
 * the daemon keeps serving the last good policy. Replay with FUZZ_SEED=<seed>.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { PolicyError } from '../../common/types.js';
import { parsePolicyText } from '../../policies/index.js';
import { rootsctl } from '../helpers/cli.js';
import { startDaemon } from '../helpers/daemon.js';
import { fuzzSeed, Rng } from '../../bench/fuzz-rng.js';
import { badPosition, mutate, MUTATIONS, mutateOnce } from '../helpers/fuzz-policy.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { poll } from '../helpers/poll.js';
import { REPO } from '../helpers/repo.js';

const repo = REPO;
const PARSES = Number(process.env.FUZZ_POLICY_PARSES ?? 2500);
// Each validation starts rootsctl; what it parses is the class the PARSES above cover in-process,
// so these check the command's side (exit code, JSON, positions) on a sample.
const VALIDATES = Number(process.env.FUZZ_POLICY_VALIDATES ?? 40);
const RELOADS = Number(process.env.FUZZ_POLICY_RELOADS ?? 60);
const TRUNCATE_EVERY = 7;

const seed = fuzzSeed();
t.comment(`policy fuzz seed ${seed} (replay with FUZZ_SEED=${seed})`);

/** Valid policies to mutate: the documented example and a few shapes of our own. */
const SEEDS: Record<string, string> = {
  example: readFileSync(join(repo, 'examples/mcp-roots.yaml'), 'utf8'),
  'one-project': readFileSync(join(repo, 'examples/one-project-writable.yaml'), 'utf8'),
  flow: '{version: 1, deny: [~/.ssh, {path: "~/p/*/.git", access: write}], servers: {fs: {roots: [{path: /srv/a, readOnly: true}, {path: "/srv/*", kind: any}]}}}\n',
  quoted: `version: 1
defaults: {readOnly: true}
servers:
  "my server":
    readOnly: false
    roots:
      - path: '/srv/Tax [2024]'
        name: "Tax \\u00e9 2024"
      - path: "/srv/{a,b}/**"
        name: 'all {base}'
        kind: directory
        expires: 2030-01-01T00:00:00+02:00
    deny:
      - '**/.env'
      - path: /srv/a/secret
        access: all
    tools:
      grep:
        paths: [path, dir]
        readOnly: true
  'github-\\*':
    roots: []
`,
  anchors: `version: 1
servers:
  a: &block
    readOnly: true
    roots:
      - &root
        path: /srv/a
        readOnly: true
  b: *block
  c:
    roots:
      - *root
      - path: /srv/b
`,
};

function check(
  t: Test,
  label: string,
  text: string,
  result: { errors: PolicyError[]; warnings: PolicyError[] },
  file: string,
): boolean {
  for (const p of [...result.errors, ...result.warnings]) {
    const bad = badPosition(p, file, text);
    if (bad !== undefined) {
      t.fail(`${label}: ${bad} (seed ${seed})`, { text, problem: p });
      return false;
    }
  }
  return true;
}

void t.test(
  'parsePolicyText: every mutation is valid or has positioned errors, and never throws',
  (t) => {
    mutations(t);
    t.end();
  },
);

void t.test('parsePolicyText: truncated at every Nth byte', (t) => {
  truncations(t);
  t.end();
});

function mutations(t: Test): void {
  const rng = new Rng(seed);
  const file = '/home/u/.config/mcp-roots.yaml';
  const names = Object.keys(SEEDS);
  let valid = 0;
  let invalid = 0;
  for (const name of names) {
    t.same(parsePolicyText(SEEDS[name]!, file).errors, [], `the ${name} seed is valid`);
  }
  for (let i = 0; i < PARSES; i++) {
    const name = rng.pick(names);
    const { text, kinds } = mutate(rng, SEEDS[name]!);
    let result;
    try {
      result = parsePolicyText(text, file);
    } catch (err) {
      t.fail(`${name} ${kinds.join('+')} threw (seed ${seed}): ${String(err)}`, { text });
      return;
    }
    if (!check(t, `${name} ${kinds.join('+')}`, text, result, file)) return;
    if (result.errors.length === 0) {
      valid++;
      if (result.policy === undefined) {
        t.fail(`${name} ${kinds.join('+')}: no errors and no policy (seed ${seed})`, { text });
        return;
      }
    } else {
      invalid++;
    }
    // The same text as bytes (the daemon reads Buffers) must agree.
    if (i % 10 === 0) {
      const again = parsePolicyText(Buffer.from(text, 'utf8'), file);
      if (again.errors.length !== result.errors.length) {
        t.fail(`${name}: string and Buffer disagree (seed ${seed})`, { text });
        return;
      }
    }
  }
  t.comment(`${PARSES} mutations (${MUTATIONS.join(', ')}): ${valid} valid, ${invalid} invalid`);
  t.ok(invalid > PARSES / 3, 'most mutations break the policy');
  t.ok(valid > 0, 'some mutations leave it valid');
}

function truncations(t: Test): void {
  const file = '/p.yaml';
  let cuts = 0;
  for (const [name, text] of Object.entries(SEEDS)) {
    const bytes = Buffer.from(text, 'utf8');
    for (let n = 0; n <= bytes.length; n += TRUNCATE_EVERY) {
      cuts++;
      // A cut inside a multi-byte character is invalid UTF-8: that too needs a position.
      const cut = bytes.subarray(0, n);
      let result;
      try {
        result = parsePolicyText(cut, file);
      } catch (err) {
        t.fail(`${name} cut at ${n} threw: ${String(err)}`);
        return;
      }
      if (!check(t, `${name} cut at ${n}`, cut.toString('utf8'), result, file)) return;
    }
  }
  t.comment(`${cuts} truncations`);
  t.pass('no truncation threw or lost its position');
}

void t.test('rootsctl validate on mutated files: exit 0 or 1, errors positioned', async (t) => {
  const rng = new Rng(seed ^ 0x5a5a5a5a);
  const dir = ownedShortDir(t);
  const home = join(dir, 'home');
  mkdirSync(home);
  const file = join(dir, 'mcp-roots.yaml');
  const names = Object.keys(SEEDS);
  const codes = { 0: 0, 1: 0 };
  for (let i = 0; i < VALIDATES; i++) {
    const name = rng.pick(names);
    const { text, kinds } = mutate(rng, SEEDS[name]!);
    writeFileSync(file, text);
    const r = await rootsctl(['validate', file, '--json'], {
      env: { HOME: home, XDG_STATE_HOME: join(dir, 'state') },
      cwd: dir,
    });
    const label = `${name} ${kinds.join('+')}`;
    if (r.code !== 0 && r.code !== 1) {
      t.fail(`${label}: exit ${r.code} (seed ${seed}): ${r.err}`, { text });
      return;
    }
    codes[r.code]++;
    const out = JSON.parse(r.out) as {
      ok: boolean;
      errors: PolicyError[];
      warnings: PolicyError[];
    };
    if (out.ok !== (r.code === 0) || out.ok !== (out.errors.length === 0)) {
      t.fail(`${label}: ok ${out.ok}, exit ${r.code}, ${out.errors.length} errors`, { text });
      return;
    }
    for (const p of [...out.errors, ...out.warnings]) {
      // A problem may sit in an included file (a mutation can add an include); it names that file.
      const inFile = p.file === file ? text : readFileSync(p.file, 'utf8');
      const bad = badPosition(p, p.file, inFile);
      if (bad !== undefined) {
        t.fail(`${label}: ${bad} (seed ${seed})`, { text, problem: p });
        return;
      }
    }
  }
  t.comment(`${VALIDATES} validations: ${codes[0]} valid, ${codes[1]} with errors`);
  t.ok(codes[1] > 0, 'invalid files exit 1');
});

void t.test(
  'live reloads: the daemon serves the last good policy through every bad edit',
  async (t) => {
    const rng = new Rng(seed ^ 0x3c3c3c3c);
    const dir = ownedShortDir(t);
    const tree = join(dir, 'tree');
    for (const d of ['a', 'b', 'c', 'repos/one', 'repos/two', 'notes']) {
      mkdirSync(join(tree, d), { recursive: true });
    }
    writeFileSync(join(tree, 'notes/todo.md'), 'x');
    const good = `version: 1
defaults:
  readOnly: false
deny:
  - ${tree}/a/secret
  - path: ${tree}/repos/*/.git
    access: write
servers:
  fs:
    roots:
      - path: ${tree}/a
        name: A
      - path: ${tree}/b
        readOnly: true
      - path: ${tree}/repos/*
        name: 'repo {base}'
      - path: ${tree}/notes/*.md
        kind: file
  'f*':
    roots:
      - path: ${tree}/c
        readOnly: true
`;
    const td = await startDaemon(t, good, { dir });
    const client = await td.connect('fuzz-policy');
    const list = async () => JSON.stringify((await client.listRoots('fs')).roots);
    let lastGood = await list();
    t.equal((JSON.parse(lastGood) as unknown[]).length, 6, 'the starting policy lists six roots');

    let valid = 0;
    let invalid = 0;
    let base = good;
    for (let i = 0; i < RELOADS; i++) {
      // Mutate the last good text, so that valid edits pile up as a person's would.
      const { text, kinds } = mutate(rng, rng.chance(0.2) ? good : base);
      const label = `reload ${i} ${kinds.join('+')}`;
      // Written whole (a temporary file renamed into place): the daemon's watcher also reloads
      // on the change, and a read in the middle of an in-place write can see a prefix that is a
      // valid policy of its own, which would then rightly be the last good one.
      writeFileSync(`${td.config}.new`, text);
      renameSync(`${td.config}.new`, td.config);
      const r = await client.reload();
      if (r.ok) {
        valid++;
        base = text;
        lastGood = await list();
        continue;
      }
      invalid++;
      const now = await list();
      if (now !== lastGood) {
        t.equal(now, lastGood, `${label}: the last good list is kept (seed ${seed})`, { text });
        return;
      }
      // The warnings are those of the policy still in force (the last good text), so only the
      // errors are positions in this text.
      if (
        r.errors.length === 0 ||
        !check(t, label, text, { errors: r.errors, warnings: [] }, td.config)
      ) {
        t.fail(`${label}: ok false needs positioned errors (seed ${seed})`, {
          text,
          errors: r.errors,
        });
        return;
      }
      const status = await client.status();
      if (status.policy.errors.length === 0) {
        t.fail(`${label}: daemon/status shows no errors (seed ${seed})`, { text });
        return;
      }
    }
    t.comment(`${RELOADS} reloads: ${valid} valid, ${invalid} invalid`);
    t.ok(invalid > 0, 'some edits were invalid');

    // Back to the original: the daemon takes it at once, and the errors are gone.
    td.writePolicy(good);
    const back = await client.reload();
    t.ok(back.ok, 'the original policy is valid again');
    t.equal((JSON.parse(await list()) as unknown[]).length, 6, 'and it serves its six roots');
    t.same((await client.status()).policy.errors, [], 'status has no errors');

    // One invalid file on disk with no reload request: the watcher sees it, and nothing is lost.
    const before = await list();
    td.writePolicy(mutateOnce(rng, good, 'truncate').slice(0, 40) + '\n  : : [\n');
    await poll(async () => (await client.status()).policy.errors.length > 0, 30_000);
    t.not((await client.status()).policy.errors.length, 0, 'the watcher reported the bad edit');
    t.equal(await list(), before, 'and the list did not change');
  },
);
