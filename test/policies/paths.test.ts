/**
 * The path helpers every list and decision goes through: appending (one function, so `/` plus
 * `etc` is never `//etc`), and canonicalising a path that may not exist, whose cost must not
 * grow with the number of missing components.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';
import { nodeFs, type FsView } from '../../policies/index.js';
import { canonicalizeLoose, childPath, listedPath, rebase } from '../../policies/paths.js';

void t.test('childPath and rebase never double a slash', (t) => {
  const rows: [string, string, string][] = [
    ['/', 'etc', '/etc'],
    ['/', 'a/b', '/a/b'],
    ['/x', 'etc', '/x/etc'],
    ['/x', '', '/x'],
  ];
  for (const [dir, rel, want] of rows) t.equal(childPath(dir, rel), want, `${dir} + ${rel}`);
  t.equal(rebase('/home/u/sys/etc', '/home/u/sys', '/'), '/etc');
  t.equal(rebase('/a/b', '/', '/c'), '/c/a/b');
  t.equal(rebase('/a', '/a', '/'), '/');
  for (const [given, named] of [
    ['/a b/%/#', '/a b/%/#'],
    ['//etc', '/etc'],
    ['/a/./b/../c', '/a/c'],
    ['/a/', '/a/'],
    ['/', '/'],
    ['/a/.b/..c', '/a/.b/..c'],
  ]) {
    t.equal(listedPath(given!), named, `${given} is listed as ${named}`);
    t.equal(listedPath(given!), fileURLToPath(pathToFileURL(given!)), `${given}: as its URI names`);
  }
  t.end();
});

/** Counts the filesystem calls canonicalizeLoose makes. */
function counting(inner: FsView): { fs: FsView; calls: () => number } {
  let n = 0;
  const count = () => n++;
  return {
    fs: {
      stat: (p) => (count(), inner.stat(p)),
      lstat: (p) => (count(), inner.lstat(p)),
      readdir: (p) => (count(), inner.readdir(p)),
      realpath: (p) => (count(), inner.realpath(p)),
      readFile: (p) => (count(), inner.readFile(p)),
      access: (p, m) => (count(), inner.access(p, m)),
      readlink: (p) => (count(), inner.readlink!(p)),
    },
    calls: () => n,
  };
}

void t.test('canonicalizeLoose', async (t) => {
  const dir = t.testdir({});
  mkdirSync(join(dir, 'real/sub'), { recursive: true });
  writeFileSync(join(dir, 'real/file'), 'x');
  symlinkSync(join(dir, 'real'), join(dir, 'link'));
  symlinkSync(join(dir, 'real/later'), join(dir, 'real/dangling'));
  symlinkSync('../real/sub', join(dir, 'real/rel'));
  symlinkSync(join(dir, 'loop-b'), join(dir, 'loop-a'));
  symlinkSync(join(dir, 'loop-a'), join(dir, 'loop-b'));
  symlinkSync(join(dir, 'real/file'), join(dir, 'filelink'));
  const rows: [string, string][] = [
    ['real/sub', 'real/sub'],
    ['link/sub', 'real/sub'],
    ['link/missing/x/y', 'real/missing/x/y'],
    ['real/dangling', 'real/later'],
    ['real/dangling/x/y', 'real/later/x/y'],
    ['link/dangling/x', 'real/later/x'],
    ['real/rel/new', 'real/sub/new'],
    ['real/file/below', 'real/file/below'],
    ['real/file/below/more', 'real/file/below/more'],
    ['filelink/below', 'real/file/below'],
    ['link/file/below', 'real/file/below'],
    ['missing', 'missing'],
  ];
  // The real filesystem is asked directly; any other view through its own calls, which throw
  // for a missing path. Both take the same steps and must give the same answers.
  const views: [string, FsView][] = [
    ['the real filesystem', nodeFs()],
    ['a view of it', counting(nodeFs()).fs],
  ];
  for (const [name, fs] of views) {
    for (const [given, want] of rows) {
      t.equal(await canonicalizeLoose(fs, join(dir, given)), join(dir, want), `${name}: ${given}`);
    }
    await t.rejects(canonicalizeLoose(fs, join(dir, 'loop-a/x')), { code: 'ELOOP' }, name);
  }

  const deep = join(dir, 'link', 'a/'.repeat(1900), 'leaf');
  const short = join(dir, 'link', 'a/leaf');
  const d = counting(nodeFs());
  t.equal(await canonicalizeLoose(d.fs, deep), join(dir, 'real', 'a/'.repeat(1900), 'leaf'));
  const s = counting(nodeFs());
  await canonicalizeLoose(s.fs, short);
  t.equal(d.calls(), s.calls(), `a deep missing path costs as many calls as a short one`);
});
