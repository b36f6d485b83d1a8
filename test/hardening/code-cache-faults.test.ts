/**
 * rootsctl's code cache (cli/code-cache.ts) never makes a command fail, hang or print: not a cache
 * directory it cannot use, not a cache file that is corrupt, huge or a FIFO, not several runs
 * writing at once. And run as root with a user's environment (`sudo -E`), it neither reads nor
 * makes anything in the user's tree, nor wherever the user's links point.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  lchownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { MAX_CACHE_BYTES } from '../../cli/cache-trust.js';
import { bin } from '../helpers/bin.js';
import { createUser, runAs } from '../helpers/users.js';

interface Answer {
  code: number | null;
  out: string;
  err: string;
}

/** Run the built rootsctl with exactly `env` (and PATH). */
function rootsctl(args: string[], env: Record<string, string>): Answer {
  const r = spawnSync(process.execPath, [bin('rootsctl'), ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function fixture(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'mr-ccf-'));
  chmodSync(dir, 0o755);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const home = join(dir, 'home');
  mkdirSync(home);
  const policy = join(dir, 'policy.yaml');
  writeFileSync(policy, `version: 1\nservers:\n  fs:\n    roots: [{ path: ${home} }]\n`);
  chmodSync(policy, 0o644);
  return { dir, home, env: { HOME: home, MCP_ROOTS_CONFIG: policy } };
}

void t.test('a cache directory that cannot be used costs nothing but the cache', (t) => {
  const { dir, env } = fixture(t);
  const expected = rootsctl(['validate'], { ...env, MCP_ROOTS_CODE_CACHE: '0' });
  t.equal(expected.code, 0, expected.err);
  writeFileSync(join(dir, 'file'), 'x');
  symlinkSync('loop', join(dir, 'loop'));
  const rows: [string, string][] = [
    ['XDG_CACHE_HOME is a file', join(dir, 'file')],
    ['XDG_CACHE_HOME is below a file', join(dir, 'file', 'below')],
    ['XDG_CACHE_HOME is a link to itself', join(dir, 'loop')],
    ['XDG_CACHE_HOME is below a link to itself', join(dir, 'loop', 'below')],
    ['XDG_CACHE_HOME is a name too long', `${dir}/${'a'.repeat(300)}`],
    ['XDG_CACHE_HOME is a path too long', `${dir}${'/a'.repeat(3000)}`],
    ['XDG_CACHE_HOME is /dev/null', '/dev/null'],
    ['XDG_CACHE_HOME is relative (ignored: the home is used)', 'relative/dir'],
  ];
  for (const [what, xdg] of rows) {
    // The answer without a cache, for the same environment (the daemon protects
    // $XDG_CACHE_HOME/mcp-roots, so validate reads XDG_CACHE_HOME too).
    const uncached = rootsctl(['validate'], {
      ...env,
      XDG_CACHE_HOME: xdg,
      MCP_ROOTS_CODE_CACHE: '0',
    });
    t.same(rootsctl(['validate'], { ...env, XDG_CACHE_HOME: xdg }), uncached, what);
  }
  t.end();
});

void t.test('a cache file that is corrupt, huge or not a file is a miss, then replaced', (t) => {
  const { dir, env } = fixture(t);
  const xdg = join(dir, 'xdg');
  const run = () => rootsctl(['validate'], { ...env, XDG_CACHE_HOME: xdg });
  const expected = rootsctl(['validate'], { ...env, MCP_ROOTS_CODE_CACHE: '0' });
  t.same(run(), expected, 'the first run writes the cache');
  const cacheDir = join(xdg, 'mcp-roots');
  const [name, ...more] = readdirSync(cacheDir);
  t.same(more, []);
  const file = join(cacheDir, name!);
  const good = readFileSync(file);
  const flip = (at: number) => () => {
    const b = Buffer.from(good);
    for (let i = at; i < Math.min(at + 4, b.length); i++) b[i] = b[i]! ^ 0xff;
    writeFileSync(file, b);
  };
  const rows: [string, () => void][] = [
    // V8 aborts the process on most of these when handed them (it keeps no checksum)
    ...[0, 12, 24, 64, good.length >> 1, good.length - 8].map((at): [string, () => void] => [
      `4 bytes flipped at ${at}`,
      flip(at),
    ]),
    ['cut in half', () => writeFileSync(file, good.subarray(0, good.length >> 1))],
    ['cut after the header', () => writeFileSync(file, good.subarray(0, 16))],
    ['zeros of the same length', () => writeFileSync(file, Buffer.alloc(good.length))],
    ['empty', () => writeFileSync(file, '')],
    [
      'bigger than any cache (sparse: costs no disk)',
      () => {
        writeFileSync(file, good);
        truncateSync(file, MAX_CACHE_BYTES + 1);
      },
    ],
    [
      'a FIFO (an open for reading would wait for a writer for ever)',
      () => {
        rmSync(file);
        const r = spawnSync('mkfifo', ['-m', '600', file]);
        if (r.status !== 0) throw new Error(`mkfifo failed: ${r.stderr.toString()}`);
      },
    ],
    [
      'a directory',
      () => {
        rmSync(file);
        mkdirSync(file, { mode: 0o700 });
      },
    ],
  ];
  for (const [what, spoil] of rows) {
    rmSync(file, { recursive: true, force: true });
    writeFileSync(file, good, { mode: 0o600 });
    spoil();
    t.same(run(), expected, `${what}: answered as uncached`);
    if (statSync(file).isFile() && statSync(file).size < MAX_CACHE_BYTES) {
      t.same(run(), expected, `${what}: and the cache written again is good`);
    }
  }
  t.end();
});

void t.test('runs writing the cache at once leave one whole cache and no litter', async (t) => {
  const { dir, env } = fixture(t);
  const xdg = join(dir, 'xdg');
  const expected = rootsctl(['validate'], { ...env, MCP_ROOTS_CODE_CACHE: '0' });
  const runs = await Promise.all(
    Array.from(
      { length: 6 },
      () =>
        new Promise<Answer>((resolve) => {
          const child = spawn(process.execPath, [bin('rootsctl'), 'validate'], {
            env: { PATH: process.env.PATH, ...env, XDG_CACHE_HOME: xdg },
          });
          let out = '';
          let err = '';
          child.stdout.on('data', (b: Buffer) => (out += b.toString()));
          child.stderr.on('data', (b: Buffer) => (err += b.toString()));
          child.on('close', (code) => resolve({ code, out, err }));
        }),
    ),
  );
  for (const r of runs) t.same(r, expected, 'each run answers as uncached');
  const files = readdirSync(join(xdg, 'mcp-roots'));
  t.equal(files.length, 1, `one cache file, no temporary files left: ${files.join(', ')}`);
  const file = join(xdg, 'mcp-roots', files[0]!);
  const { ino } = statSync(file);
  t.same(rootsctl(['validate'], { ...env, XDG_CACHE_HOME: xdg }), expected);
  t.equal(statSync(file).ino, ino, 'the next run used it (a refused cache is written anew)');
});

/** Every path below `dir`, relative, links not followed. */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

void t.test('as root with a user environment: nothing read or made in the user tree', (t) => {
  const user = createUser(t);
  const { dir, env } = fixture(t);
  // A directory only root may write: the user's links must not make root write there.
  const rootOnly = join(dir, 'root-only');
  mkdirSync(rootOnly, { mode: 0o700 });
  const own = (p: string) => lchownSync(p, user.uid, user.gid);
  const rows: [string, (home: string) => Record<string, string>][] = [
    ['no ~/.cache yet', () => ({})],
    [
      'the user ~/.cache',
      (home) => {
        mkdirSync(join(home, '.cache'), { mode: 0o700 });
        own(join(home, '.cache'));
        return {};
      },
    ],
    [
      'the user ~/.cache is a link into a directory only root may write',
      (home) => {
        symlinkSync(rootOnly, join(home, '.cache'));
        own(join(home, '.cache'));
        return {};
      },
    ],
    [
      'XDG_CACHE_HOME in the user tree, with a cache directory the user made',
      (home) => {
        mkdirSync(join(home, 'xdg', 'mcp-roots'), { recursive: true, mode: 0o700 });
        for (const p of ['xdg', 'xdg/mcp-roots']) own(join(home, p));
        return { XDG_CACHE_HOME: join(home, 'xdg') };
      },
    ],
  ];
  let i = 0;
  for (const [what, layout] of rows) {
    const home = join(user.home, `h${i++}`);
    mkdirSync(home, { mode: 0o700 });
    own(home);
    const extra = layout(home);
    const before = tree(home);
    const expected = rootsctl(['validate'], { ...env, HOME: home, MCP_ROOTS_CODE_CACHE: '0' });
    const r = rootsctl(['validate'], { ...env, HOME: home, ...extra });
    t.same(r, expected, `${what}: answered as uncached`);
    t.same(tree(home), before, `${what}: nothing made in the user tree`);
    t.same(readdirSync(rootOnly), [], `${what}: nothing made where the user's links point`);
  }
  t.end();
});

void t.test('a user whose cache directory cannot be written or reached runs quietly', (t) => {
  const user = createUser(t);
  const { env } = fixture(t);
  const asUser = (xdg: Record<string, string>) => {
    const r = runAs(user, process.execPath, [bin('rootsctl'), 'validate'], { ...env, ...xdg });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };
  const locked = join(user.home, 'locked');
  mkdirSync(join(locked, 'mcp-roots'), { recursive: true, mode: 0o700 });
  chownSync(locked, user.uid, user.gid);
  chownSync(join(locked, 'mcp-roots'), user.uid, user.gid);
  chmodSync(join(locked, 'mcp-roots'), 0o500);
  const rows: [string, string][] = [
    ['a read-only cache directory', locked],
    ['below a directory the user cannot enter', '/root/mcp-roots-test/x'],
    ['below a directory of root the user may not write', '/usr'],
  ];
  for (const [what, xdg] of rows) {
    const uncached = asUser({ XDG_CACHE_HOME: xdg, MCP_ROOTS_CODE_CACHE: '0' });
    t.same(asUser({ XDG_CACHE_HOME: xdg }), uncached, what);
  }
  t.same(readdirSync(join(locked, 'mcp-roots')), [], 'nothing written');
  t.end();
});
