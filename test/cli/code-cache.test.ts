/**
 * rootsctl's V8 code cache (cli/code-cache.ts): written only into the user's own closed
 * directory, never read from anything another user could have planted, and never a reason for
 * a command to answer differently or fail.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { bin } from '../helpers/bin.js';

/** A home, a cache directory and a valid policy in a fresh fixture. */
function setup(t: Test) {
  const dir = t.testdir({ home: { work: {} }, cache: {} });
  const policy = join(dir, 'policy.yaml');
  writeFileSync(policy, `version: 1\nservers:\n  fs:\n    roots: [{ path: ${dir}/home/work }]\n`);
  const cache = join(dir, 'cache');
  const env = {
    HOME: join(dir, 'home'),
    XDG_CACHE_HOME: cache,
    PATH: process.env.PATH,
    MCP_ROOTS_CONFIG: policy,
  };
  const run = (args: string[], extra: Record<string, string> = {}) => {
    const r = spawnSync(process.execPath, [bin('rootsctl'), ...args], {
      env: { ...env, ...extra },
      encoding: 'utf8',
    });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };
  const files = (): string[] => {
    try {
      return readdirSync(join(cache, 'mcp-roots'));
    } catch {
      return [];
    }
  };
  return { dir, cache, run, files };
}

void t.test('a first run writes the cache 0700/0600; later runs answer the same', (t) => {
  const { cache, run, files } = setup(t);
  const uncached = run(['validate'], { MCP_ROOTS_CODE_CACHE: '0' });
  t.equal(uncached.code, 0, uncached.err);
  t.same(files(), [], 'MCP_ROOTS_CODE_CACHE=0 writes nothing');
  const first = run(['validate']);
  const second = run(['validate']);
  t.same(first, uncached, 'same answer while writing the cache');
  t.same(second, uncached, 'same answer from the cache');
  const [file, ...more] = files();
  t.same(more, [], 'one file for the one command');
  t.match(file, /^rootsctl-[0-9a-f]{16}-v\d+\.\d+\.\d+-[a-z0-9]+-validate\.v8$/);
  t.equal(lstatSync(join(cache, 'mcp-roots')).mode & 0o777, 0o700);
  t.equal(lstatSync(join(cache, 'mcp-roots', file!)).mode & 0o777, 0o600);
  t.end();
});

void t.test('a cache another user could have written is never read', async (t) => {
  // Each row makes the cache file unusable in one way; the command must answer as uncached and
  // must not replace what it cannot trust with its own (except where it may: the file is its).
  const rows: [string, (dir: string, file: string) => void][] = [
    ['the cache directory is open to the group', (dir) => chmodSync(dir, 0o770)],
    ['the cache directory is open to others', (dir) => chmodSync(dir, 0o705)],
    [
      'the cache directory is a link to a closed directory',
      (dir) => {
        renameSync(dir, `${dir}.real`);
        symlinkSync(`${dir}.real`, dir);
      },
    ],
    ['the cache file is writable by the group', (_dir, file) => chmodSync(file, 0o620)],
    [
      'the cache file is a link',
      (_dir, file) => {
        renameSync(file, `${file}.real`);
        symlinkSync(`${file}.real`, file);
      },
    ],
    ['the cache file is garbage', (_dir, file) => writeFileSync(file, 'not a code cache')],
  ];
  for (const [name, spoil] of rows) {
    await t.test(name, (t) => {
      const { cache, run, files } = setup(t);
      const expected = run(['validate'], { MCP_ROOTS_CODE_CACHE: '0' });
      t.equal(run(['validate']).code, 0);
      const dir = join(cache, 'mcp-roots');
      const [file] = files();
      spoil(dir, join(dir, file!));
      // A planted cache would be deserialized as code: here it must only cost a compile.
      t.same(run(['validate']), expected);
      t.same(run(['--version']).code, 0);
      t.end();
    });
  }
});

void t.test('a directory that is not the user own is not written into', (t) => {
  const { cache, run, files } = setup(t);
  mkdirSync(join(cache, 'mcp-roots'), { mode: 0o755 });
  chmodSync(join(cache, 'mcp-roots'), 0o755);
  t.equal(run(['validate']).code, 0);
  t.same(files(), []);
  t.end();
});

void t.test('a cache of another build is removed when this one writes its own', (t) => {
  const { cache, run, files } = setup(t);
  mkdirSync(join(cache, 'mcp-roots'), { mode: 0o700 });
  const stale = 'rootsctl-0000000000000000-v0.0.0-x64-validate.v8';
  writeFileSync(join(cache, 'mcp-roots', stale), 'old', { mode: 0o600 });
  writeFileSync(join(cache, 'mcp-roots', 'unrelated'), 'kept', { mode: 0o600 });
  t.equal(run(['validate']).code, 0);
  t.notOk(files().includes(stale));
  t.ok(files().includes('unrelated'));
  t.equal(files().filter((f) => f.endsWith('-validate.v8')).length, 1);
  t.end();
});

void t.test(
  'where WebAssembly cannot run (--jitless) there is no seal: no cache, same answers',
  (t) => {
    // The seal's checksum runs as WebAssembly (cli/cache-trust.ts); V8 has none without its JIT.
    const { run, files } = setup(t);
    const jitless = { NODE_OPTIONS: '--jitless' };
    // (V8 warns on stderr that --jitless turns WebAssembly off: the same with or without a cache.)
    const expected = run(['validate'], { ...jitless, MCP_ROOTS_CODE_CACHE: '0' });
    t.equal(expected.code, 0, expected.err);
    t.same(run(['validate'], jitless), expected, 'the first run');
    t.same(run(['validate'], jitless), expected, 'a second run');
    t.same(files(), [], 'nothing written without a seal');
    t.equal(run(['validate']).code, 0, 'then a run with the JIT');
    t.equal(files().length, 1, 'which writes its cache');
    t.same(run(['validate'], jitless), expected, 'which a run without the JIT does not use');
    t.end();
  },
);
