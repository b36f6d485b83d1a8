/**
 * The deny watch's notes of git directories (proxy/git-notes.ts, handed on through `onPlanted`),
 * beyond what the end-to-end test (test/hardening/sandbox-git-plant.test.ts) shows: a code entry
 * made while the watch was not listening (its events lost to a flood, say) is found by the next
 * walk of the roots, since the notes outlive the watches; a noted directory renamed is followed;
 * a git directory put in place of a noted one is not taken for the person's; the entries a
 * directory held at the start are never handed on; a repository completed after the start (a clone) is noted as it stands then;
 * a git directory made inside a noted repository (its work tree, its `modules/`) has every code
 * entry handed on, in either order of its making; and so is a new `.git` file or link there, and a
 * directory whose name is not UTF-8 carried into the work tree (it cannot be walked by name). A
 * root inside the person's repository is its work tree; a repository noted elsewhere during the
 * session and renamed into such a place is not trusted for its notes; and a root added during
 * the session is walked as the first walk was (its repositories are the person's). Two
 * repositories the first walk found, brought together by a rename (one under the other, or one in
 * the other's place), are both suspect; one moved under a repository made during the session is
 * not, whether or not that one was noted yet. A work tree marked only by a `.git` file (a linked
 * worktree, the root itself) is a work tree; and a denied directory in a work tree, which the
 * watch does not enter, is looked into.
 */
import { linkSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { isSentinel, watchedRoot } from '../helpers/deny-watch.js';

/** A git directory as git takes it, holding `config` and no other code entry. */
function gitDir(dir: string): void {
  mkdirSync(join(dir, 'objects'), { recursive: true });
  mkdirSync(join(dir, 'refs'));
  writeFileSync(join(dir, 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(dir, 'config'), '[core]\n');
}

/** A linked worktree's git directory as `git worktree add` makes it, `commondir` saying that. */
function worktreeDir(dir: string, commondir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'commondir'), `${commondir}\n`);
  writeFileSync(join(dir, 'HEAD'), 'ref: refs/heads/wt\n');
}

void t.test('an entry made while nothing watched is found by the next walk', async (t) => {
  const w = await watchedRoot(t, [], (r) => gitDir(join(r, 'repo', '.git')));
  const git = join(w.r, 'repo', '.git');
  w.dw.close();
  writeFileSync(join(git, 'commondir'), '/elsewhere\n');
  mkdirSync(join(git, 'hooks'));
  await w.dw.update(w.roots);
  t.same(w.planted.sort(), [join(git, 'commondir'), join(git, 'hooks')], 'both handed on');
});

void t.test('what a noted directory held, where it goes, and what takes its place', async (t) => {
  const w = await watchedRoot(t, [], (r) => {
    gitDir(join(r, 'a', '.git'));
    gitDir(join(r, 'b', '.git'));
    gitDir(join(r, 'c', '.git'));
  });
  // The person's `git config`: a new config renamed over the one that was there.
  writeFileSync(join(w.r, 'a', '.git', 'config.new'), '[core]\n\tbare = false\n');
  renameSync(join(w.r, 'a', '.git', 'config.new'), join(w.r, 'a', '.git', 'config'));
  // A repository renamed and back: still the one noted. (Renamed under another repository, that
  // one's code is handed on: the last row says why.)
  renameSync(join(w.r, 'c'), join(w.r, 'c2'));
  await w.quietNow();
  renameSync(join(w.r, 'c2'), join(w.r, 'c'));
  await w.quietNow();
  w.dw.close();
  await w.dw.update(w.roots);
  t.same(w.planted, [], 'nothing handed on, by the events or by the walk after');
  // Another git directory where a noted one stood (made before the old one goes, so that it
  // cannot get the old one's inode number back): not known to be the person's.
  gitDir(join(w.r, 'b', 'new.git'));
  mkdirSync(join(w.r, 'b', 'new.git', 'hooks'));
  rmSync(join(w.r, 'b', '.git'), { recursive: true });
  renameSync(join(w.r, 'b', 'new.git'), join(w.r, 'b', '.git'));
  await w.quietNow();
  t.same(
    w.planted.sort(),
    [join(w.r, 'b', '.git', 'config'), join(w.r, 'b', '.git', 'hooks')],
    'its code entries are handed on',
  );
});

void t.test('a repository completed after the start is noted as it stands then', async (t) => {
  const w = await watchedRoot(t);
  // In the order `git init` and `git clone` make it: hooks from the templates, then the rest.
  const git = join(w.r, 'cloned', '.git');
  mkdirSync(join(git, 'hooks'), { recursive: true });
  mkdirSync(join(git, 'objects'));
  mkdirSync(join(git, 'refs'));
  writeFileSync(join(git, 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(git, 'config'), '[core]\n');
  await w.quietNow();
  t.same(w.planted, [], 'nothing of the clone is handed on');
  writeFileSync(join(git, 'commondir'), '/elsewhere\n');
  await w.quietNow();
  t.same(w.planted, [join(git, 'commondir')], 'an entry it did not have then is');
});

void t.test('a git directory made inside a noted repository', async (t) => {
  const w = await watchedRoot(t, [], (r) => {
    gitDir(join(r, 'repo', '.git'));
    mkdirSync(join(r, 'repo', 'sub'));
    writeFileSync(join(r, 'repo', 'sub', '.git'), 'gitdir: ../.git/modules/sub\n');
  });
  const repo = join(w.r, 'repo');
  // A `.git` in its work tree: each code entry as it appears, before the directory is a git
  // directory at all (git reads it once a gitlink in the index leads there).
  mkdirSync(join(repo, 'src', 'evil', '.git'), { recursive: true });
  writeFileSync(join(repo, 'src', 'evil', '.git', 'config'), '[core]\n');
  await w.quietNow();
  t.same(w.planted, [join(repo, 'src', 'evil', '.git', 'config')], 'in the work tree');
  // One below `.git/modules/`, made config first: handed on once it is a git directory.
  const mod = join(repo, '.git', 'modules', 'm');
  mkdirSync(mod, { recursive: true });
  writeFileSync(join(mod, 'config'), '[core]\n');
  mkdirSync(join(mod, 'hooks'));
  await w.quietNow();
  t.equal(w.planted.length, 1, 'not yet a git directory: nothing more');
  writeFileSync(join(mod, 'HEAD'), 'ref: refs/heads/main\n');
  mkdirSync(join(mod, 'refs'));
  await w.quietNow();
  t.same(
    w.planted.slice(1).sort(),
    [join(mod, 'config'), join(mod, 'hooks')],
    'below modules/, once it is one',
  );
  w.planted.splice(1);
  // Made while nothing watched: the walk after finds it.
  w.dw.close();
  gitDir(join(repo, 'lib', '.git'));
  await w.dw.update(w.roots);
  t.same(w.planted.slice(1), [join(repo, 'lib', '.git', 'config')], 'by the next walk');
  // A `.git` that is not a directory, in the work tree: a file naming a git directory elsewhere,
  // and a link to one. One the first walk found (an existing submodule's) is the person's.
  const from = w.planted.length;
  mkdirSync(join(repo, 'f'));
  writeFileSync(join(repo, 'f', '.git'), 'gitdir: /elsewhere\n');
  mkdirSync(join(repo, 'l'));
  symlinkSync('/elsewhere', join(repo, 'l', '.git'));
  await w.quietNow();
  t.same(
    w.planted.slice(from).sort(),
    [join(repo, 'f', '.git'), join(repo, 'l', '.git')],
    'a .git file or link',
  );
  w.dw.close();
  await w.dw.update(w.roots);
  t.equal(w.planted.length, from + 2, "the existing submodule's .git stays, walked again");
  // A linked worktree's directory, as `git worktree add` makes it, is not one of these (only its
  // own `.git` file leads there; one holding code is, below).
  const before = w.planted.length;
  worktreeDir(join(repo, '.git', 'worktrees', 'wt'), '../..');
  await w.quietNow();
  t.equal(w.planted.length, before, 'worktrees/ is left alone');
});

void t.test(
  'where a repository made during the session stood, a new one is not suspect',
  async (t) => {
    const w = await watchedRoot(t, [], (r) => gitDir(join(r, 'repo', '.git')));
    // Made during the session (by the server, say), noted when complete, then moved away.
    gitDir(join(w.r, 'p', '.git'));
    await w.quietNow();
    renameSync(join(w.r, 'p'), join(w.r, 'gone'));
    await w.quietNow();
    // The person makes a repository there.
    gitDir(join(w.r, 'p', '.git'));
    await w.quietNow();
    t.same(w.planted, [], "nothing of the person's new repository is handed on");
  },
);

void t.test(
  'a directory moved into the work tree, carrying a repository under a name that is not UTF-8, is handed on at that name',
  async (t) => {
    const w = await watchedRoot(t, [], (r) => gitDir(join(r, 'repo', '.git')));
    // Made outside the work tree (where it is the server's own), then moved in whole: the
    // walk of `carried` reads `x\xffy` by its bytes, and git behind a gitlink would enter it.
    const stage = join(w.r, 'stage');
    const odd = Buffer.concat([Buffer.from(`${stage}/x`), Buffer.from([0xff]), Buffer.from('y')]);
    mkdirSync(odd, { recursive: true });
    const oddGit = Buffer.concat([odd, Buffer.from('/.git')]);
    for (const d of ['', '/objects', '/refs'])
      mkdirSync(Buffer.concat([oddGit, Buffer.from(d)]), { recursive: true });
    writeFileSync(Buffer.concat([oddGit, Buffer.from('/HEAD')]), 'ref: refs/heads/main\n');
    writeFileSync(Buffer.concat([oddGit, Buffer.from('/config')]), '[core]\n');
    await w.quietNow();
    t.same(w.planted, [], 'made outside the work tree: its own');
    renameSync(stage, join(w.r, 'repo', 'carried'));
    await w.quietNow();
    t.same(w.planted, [join(w.r, 'repo', 'carried', 'x\uFFFDy')], 'moved in: handed on');
  },
);

void t.test(
  "a root inside the person's repository: a git directory made anywhere in it",
  async (t) => {
    // The root is a package of the person's monorepo, whose `.git` lies above it: git run in the
    // package finds a `.git` (or bare git directory) made there before the monorepo's.
    const w = await watchedRoot(
      t,
      [],
      (r) => {
        gitDir(join(r, 'mono', '.git'));
        mkdirSync(join(r, 'mono', 'packages', 'pkg', 'src'), { recursive: true });
      },
      'mono/packages/pkg',
    );
    gitDir(join(w.root, '.git'));
    mkdirSync(join(w.root, 'src', 'bare'));
    gitDir(join(w.root, 'src', 'bare'));
    await w.quietNow();
    t.same(
      w.planted.sort(),
      [join(w.root, '.git', 'config'), join(w.root, 'src', 'bare', 'config')],
      'handed on, though no repository lies in the root',
    );
  },
);

void t.test('a repository made elsewhere during the session, renamed into place', async (t) => {
  const w = await watchedRoot(t, [], (r) => gitDir(join(r, 'repo', '.git')));
  const repo = join(w.r, 'repo');
  // Made whole outside the work tree (noted then, as the server's own), then moved in.
  mkdirSync(join(w.r, 'stage'));
  gitDir(join(w.r, 'stage', 'evil', '.git'));
  await w.quietNow();
  t.same(w.planted, [], 'made elsewhere: its own');
  renameSync(join(w.r, 'stage', 'evil'), join(repo, 'evil'));
  await w.quietNow();
  t.same(w.planted, [join(repo, 'evil', '.git', 'config')], 'into the work tree: handed on');
  // A bare one made elsewhere, renamed to a `.git` above the person's repository.
  gitDir(join(w.r, 'stage', 'gd'));
  await w.quietNow();
  renameSync(join(w.r, 'stage', 'gd'), join(w.r, '.git'));
  await w.quietNow();
  t.same(w.planted.slice(1), [join(w.r, '.git', 'config')], 'above the repository: handed on');
});

void t.test(
  'a root added during the session: the repositories in it are the person’s',
  async (t) => {
    const w = await watchedRoot(
      t,
      [],
      (r) => {
        mkdirSync(join(r, 'a'));
        gitDir(join(r, 'later', 'repo', '.git'));
      },
      'a',
    );
    // The person adds `later`, which holds their repository (the server never had it).
    const later = join(w.r, 'later');
    const root = w.roots[0]!;
    await w.dw.update([...w.roots, { ...root, uri: pathToFileURL(later).href }]);
    t.same(w.planted, [], "the person's repository in it is not handed on");
    gitDir(join(later, 'repo', 'evil', '.git'));
    await w.quietNow();
    await w.dw.settled();
    t.same(
      w.planted,
      [join(later, 'repo', 'evil', '.git', 'config')],
      'one made in its work tree is',
    );
  },
);

void t.test(
  "the person's repository moved back under a git directory the server made",
  async (t) => {
    const w = await watchedRoot(t, [], (r) => gitDir(join(r, 'proj', 'repo', '.git')));
    const proj = join(w.r, 'proj');
    // Moved out of the way; a git directory made where nothing of the person's lies below it
    // (noted as the server's own), renamed to `proj/.git`; the repository moved back under it.
    renameSync(join(proj, 'repo'), join(w.r, 'away'));
    await w.quietNow();
    gitDir(join(w.r, 'ev'));
    await w.quietNow();
    renameSync(join(w.r, 'ev'), join(proj, '.git'));
    await w.quietNow();
    t.same(w.planted, [], 'nothing of the person’s below it yet');
    renameSync(join(w.r, 'away'), join(proj, 'repo'));
    await w.quietNow();
    // Not the repository's own: the one above was made during the session, so that one is the
    // server's (against the next row, where both were there at the start).
    t.same(w.planted, [join(proj, '.git', 'config')], 'once it is: handed on');
  },
);

void t.test('a repository moved under one that was not above it at the start', async (t) => {
  // `evil` stands for a repository the server made in an earlier session: this session's first
  // walk notes it with the person's, and cannot tell. Git run in `repo` finds `evil`'s once
  // `repo`'s own HEAD is broken (which the server may write), so its code is handed on: were it
  // the person's (a repository moved into another's work tree while the server runs), it is
  // moved aside all the same, and the log says how to move it back.
  const w = await watchedRoot(t, [], (r) => {
    gitDir(join(r, 'repo', '.git'));
    gitDir(join(r, 'evil', '.git'));
    gitDir(join(r, 'outer', '.git'));
    gitDir(join(r, 'outer', 'sub', '.git'));
  });
  // The person's nested repositories moved together: what was above stays above.
  renameSync(join(w.r, 'outer'), join(w.r, 'outer2'));
  await w.quietNow();
  t.same(w.planted, [], 'a repository and the one above it, renamed together: nothing');
  renameSync(join(w.r, 'repo'), join(w.r, 'evil', 'repo'));
  await w.quietNow();
  // Either may be the server's: `evil`'s, run once `repo`'s HEAD is broken, or `repo`'s, which
  // git run in `evil` enters behind a gitlink the server stages.
  t.same(
    w.planted.sort(),
    [join(w.r, 'evil', '.git', 'config'), join(w.r, 'evil', 'repo', '.git', 'config')],
    'moved under another: both handed on',
  );
});

void t.test('a repository moved under one made during the session', async (t) => {
  const w = await watchedRoot(t, [], (r) => gitDir(join(r, 'plain', '.git')));
  // The server's own repository, left without its `config` (a `git init` stopped half-way), so
  // that it is not noted; and the person's moved under it before any event of it is heard.
  const other = join(w.r, 'other');
  mkdirSync(join(other, '.git', 'objects'), { recursive: true });
  mkdirSync(join(other, '.git', 'refs'));
  mkdirSync(join(other, '.git', 'hooks'));
  writeFileSync(join(other, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  renameSync(join(w.r, 'plain'), join(other, 'plain'));
  await w.quietNow();
  // The upper is the server's (made during the session), the lower the person's: only the
  // upper's code is handed on, as when the upper had been noted first.
  t.same(w.planted, [join(other, '.git', 'hooks')], "the upper's code only");
  renameSync(join(other, 'plain'), join(w.r, 'plain'));
  await w.quietNow();
  t.same(w.planted, [join(other, '.git', 'hooks')], 'moved back: nothing more');
});

void t.test('a .git file of the start carried below a repository', async (t) => {
  // `evil/.git` names `store/g`, both the server's from an earlier session, which the first walk
  // notes with the person's. Carried into `main`'s work tree (where a gitlink the server stages
  // makes git enter it), it is judged as a git directory moved under another is.
  const w = await watchedRoot(t, [], (r) => {
    gitDir(join(r, 'main', '.git'));
    gitDir(join(r, 'store', 'g'));
    mkdirSync(join(r, 'evil'));
    writeFileSync(join(r, 'evil', '.git'), 'gitdir: ../store/g\n');
    // The person's submodule checkout, below its superproject.
    gitDir(join(r, 'sup', '.git'));
    mkdirSync(join(r, 'sup', 'a', 'sub'), { recursive: true });
    writeFileSync(join(r, 'sup', 'a', 'sub', '.git'), 'gitdir: ../../.git/modules/sub\n');
  });
  // Moved within its superproject (`git mv`): what was above it still is.
  renameSync(join(w.r, 'sup', 'a'), join(w.r, 'sup', 'b'));
  await w.quietNow();
  t.same(w.planted, [], 'a checkout moved within its superproject: nothing');
  renameSync(join(w.r, 'evil'), join(w.r, 'main', 'evil'));
  await w.quietNow();
  t.same(
    w.planted.sort(),
    [join(w.r, 'main', '.git', 'config'), join(w.r, 'main', 'evil', '.git')],
    'carried into a work tree: the pointer and the upper code handed on',
  );
});

void t.test('a link the person reaches a repository by, re-pointed', async (t) => {
  // `proj -> real` at the start: git run in `proj` is run in `real`. Put in front of a
  // repository of the server's, or replaced by one, git run there runs the server's config.
  const w = await watchedRoot(t, [], (r) => {
    gitDir(join(r, 'real', '.git'));
    mkdirSync(join(r, 'real', 'docs'));
    symlinkSync('real', join(r, 'proj'));
    symlinkSync('real/docs', join(r, 'docs'));
  });
  gitDir(join(w.r, 'evil', '.git'));
  await w.quietNow();
  t.same(w.planted, [], "the server's own repository: nothing");
  // A link to what is no repository's top may be re-pointed (pnpm re-points thousands).
  symlinkSync('evil', join(w.r, 'd2'));
  renameSync(join(w.r, 'd2'), join(w.r, 'docs'));
  await w.quietNow();
  t.same(w.planted, [], 'a link naming no repository: nothing');
  symlinkSync('evil', join(w.r, 'p2'));
  renameSync(join(w.r, 'p2'), join(w.r, 'proj'));
  await w.quietNow();
  t.same(w.planted, [join(w.r, 'proj')], 're-pointed: the new link is handed on');
  // Replaced by a repository made in its place: the one standing there is not the person's.
  rmSync(join(w.r, 'proj'), { force: true });
  w.planted.length = 0;
  gitDir(join(w.r, 'proj', '.git'));
  await w.quietNow();
  t.same(w.planted, [join(w.r, 'proj', '.git', 'config')], 'a repository in its place: its code');
  // Or a `.git` file naming one (an attacker pass), in place of the link or of the repository.
  rmSync(join(w.r, 'proj'), { recursive: true });
  w.planted.length = 0;
  mkdirSync(join(w.r, 'p3'));
  writeFileSync(join(w.r, 'p3', '.git'), 'gitdir: ../evil/.git\n');
  renameSync(join(w.r, 'p3'), join(w.r, 'proj'));
  await w.quietNow();
  t.same(w.planted, [join(w.r, 'proj', '.git')], 'a .git file in its place');
  renameSync(join(w.r, 'real'), join(w.r, 'real.old'));
  mkdirSync(join(w.r, 'p4'));
  writeFileSync(join(w.r, 'p4', '.git'), 'gitdir: ../evil/.git\n');
  renameSync(join(w.r, 'p4'), join(w.r, 'real'));
  await w.quietNow();
  t.same(
    w.planted,
    [join(w.r, 'proj', '.git'), join(w.r, 'real', '.git')],
    "a .git file where the person's repository stood",
  );
});

void t.test("a repository put where another of the start's stood", async (t) => {
  // `x` stands for the server's clone of `repo` from an earlier session, noted with the person's.
  const w = await watchedRoot(t, [], (r) => {
    gitDir(join(r, 'repo', '.git'));
    gitDir(join(r, 'cache', 'x', '.git'));
  });
  renameSync(join(w.r, 'repo'), join(w.r, 'cache', 'old'));
  await w.quietNow();
  t.same(w.planted, [], "the person's moved away: nothing");
  renameSync(join(w.r, 'cache', 'x'), join(w.r, 'repo'));
  await w.quietNow();
  t.same(w.planted, [join(w.r, 'repo', '.git', 'config')], 'the other in its place: handed on');
  // The person's moved back to its own place (the other moved off first): nothing more.
  renameSync(join(w.r, 'repo'), join(w.r, 'cache', 'x'));
  await w.quietNow();
  renameSync(join(w.r, 'cache', 'old'), join(w.r, 'repo'));
  await w.quietNow();
  t.equal(w.planted.length, 1, 'back where it stood: its own place');
});

void t.test('work trees marked by a .git file', async (t) => {
  // The root is a linked worktree (its `.git` a file leading out of the roots); `r/other` holds
  // another, whose tree the server then renames.
  const w = await watchedRoot(
    t,
    [],
    (r) => {
      mkdirSync(join(r, 'wt', 'src'), { recursive: true });
      writeFileSync(join(r, 'wt', '.git'), 'gitdir: /elsewhere/.git/worktrees/wt\n');
      mkdirSync(join(r, 'wt', 'other', 'tree'), { recursive: true });
      writeFileSync(join(r, 'wt', 'other', 'tree', '.git'), 'gitdir: /elsewhere/worktrees/t\n');
    },
    'wt',
  );
  gitDir(join(w.root, 'src', '.git'));
  mkdirSync(join(w.root, 'lib'));
  gitDir(join(w.root, 'lib'));
  await w.quietNow();
  t.same(
    w.planted.sort(),
    [join(w.root, 'lib', 'config'), join(w.root, 'src', '.git', 'config')],
    "in the root's own work tree: handed on",
  );
  const from = w.planted.length;
  renameSync(join(w.root, 'other', 'tree'), join(w.root, 'other', 'moved'));
  await w.quietNow();
  gitDir(join(w.root, 'other', 'moved', 'deep', '.git'));
  await w.quietNow();
  t.same(
    w.planted.slice(from),
    [join(w.root, 'other', 'moved', 'deep', '.git', 'config')],
    'in a linked worktree renamed: handed on',
  );
});

void t.test("a denied directory in a repository's work tree is looked into", async (t) => {
  const w = await watchedRoot(t, [{ pattern: '**/private', access: 'all' }], (r) =>
    gitDir(join(r, 'repo', '.git')),
  );
  const repo = join(w.r, 'repo');
  // Made elsewhere (the server's own there), then moved in under a protected name: git run in
  // `repo` enters it behind a gitlink, though the deny watch has nothing to report inside.
  gitDir(join(w.r, 'stage', 'evil', '.git'));
  await w.quietNow();
  renameSync(join(w.r, 'stage', 'evil'), join(repo, '.vscode'));
  await w.quietNow();
  t.same(w.planted, [join(repo, '.vscode', '.git', 'config')], 'its code is handed on');
  t.ok(
    w.reports.some((d) => d.path === join(repo, '.vscode') && d.access === 'write'),
    'and the directory reported once, as denied for writing (a restart after the calls)',
  );
  // Made inside it afterwards, before that restart: watched for git directories, so handed on
  // at once, and no denied path reported for each entry inside.
  mkdirSync(join(repo, 'private'));
  await w.quietNow();
  const reported = w.reports.length;
  gitDir(join(repo, 'private', 'x', '.git'));
  gitDir(join(repo, '.vscode', 'y', '.git'));
  await w.quietNow();
  t.same(
    w.planted.slice(1).sort(),
    [join(repo, '.vscode', 'y', '.git', 'config'), join(repo, 'private', 'x', '.git', 'config')],
    'what is made inside is handed on as it appears',
  );
  t.same(
    w.reports.slice(reported).filter((d) => !isSentinel(d.path) && d.why === undefined),
    [],
    'nothing inside reported as a denied path (only the plants, which stop the server)',
  );
  // Outside every work tree a denied directory is its own, and not looked into.
  const before = w.reports.length;
  mkdirSync(join(w.r, 'plain', '.vscode'), { recursive: true });
  await w.quietNow();
  t.ok(
    w.reports
      .slice(before)
      .some((d) => d.path === join(w.r, 'plain', '.vscode') && d.access === 'write'),
    'outside a work tree: reported as denied for writing',
  );
});

void t.test(
  'a denied directory carried into the work tree inside another, then filled',
  async (t) => {
    const w = await watchedRoot(t, [], (r) => gitDir(join(r, 'repo', '.git')));
    const repo = join(w.r, 'repo');
    // Empty, outside every work tree: only denied for writing there, and not watched.
    mkdirSync(join(w.r, 'stage', '.vscode'), { recursive: true });
    await w.quietNow();
    renameSync(join(w.r, 'stage'), join(repo, 'stage'));
    await w.quietNow();
    // Carried into the work tree: watched for git directories from then on.
    const vscode = join(repo, 'stage', '.vscode');
    gitDir(join(vscode, 'evil', '.git'));
    await w.quietNow();
    t.same(w.planted, [join(vscode, 'evil', '.git', 'config')], 'filled after: handed on');
  },
);

void t.test(
  'what a walk after lost events finds: a name that is not UTF-8, a linked config',
  async (t) => {
    const w = await watchedRoot(t, [], (r) => gitDir(join(r, 'repo', '.git')));
    const repo = join(w.r, 'repo');
    // Made while nothing watched (events lost to a flood, say): no event will say so.
    w.dw.close();
    const odd = Buffer.concat([Buffer.from(`${repo}/y`), Buffer.from([0xfe])]);
    mkdirSync(Buffer.concat([odd, Buffer.from('/.git/refs')]), { recursive: true });
    writeFileSync(Buffer.concat([odd, Buffer.from('/.git/HEAD')]), 'ref: refs/heads/main\n');
    // The person's config with a second name, as a server makes one while its mount is gone.
    linkSync(join(repo, '.git', 'config'), join(repo, '.git', 'x'));
    await w.dw.update(w.roots);
    t.same(
      w.planted.sort(),
      [join(repo, '.git', 'config'), join(repo, 'y\uFFFD')],
      'both handed on by the walk',
    );
  },
);

void t.test('a code entry with a second name at the start is handed on', async (t) => {
  const w = await watchedRoot(t, [], (r) => {
    gitDir(join(r, 'repo', '.git'));
    linkSync(join(r, 'repo', '.git', 'config'), join(r, 'repo', '.git', 'x'));
  });
  t.same(w.planted, [join(w.r, 'repo', '.git', 'config')], 'by the first walk');
});

void t.test(
  "the person's config replaced (git config): the server is stopped at once",
  async (t) => {
    const w = await watchedRoot(t, [], (r) => gitDir(join(r, 'repo', '.git')));
    const config = join(w.r, 'repo', '.git', 'config');
    // As git writes it: a lock file renamed over it, which drops the sandbox's read-only mount.
    writeFileSync(`${config}.lock`, '[core]\n[user]\n\tname = me\n');
    renameSync(`${config}.lock`, config);
    await w.quietNow();
    const stop = w.reports.find((d) => d.path === config);
    t.equal(stop?.access, 'all', 'stopped at once, not restarted after its calls');
    t.match(stop?.why, 'and its read-only mount in the sandbox with it');
    t.same(w.planted, [], 'nothing moved: it is still the person’s');
  },
);

void t.test(
  "a repository of the start of another shape, put where the person's stood",
  async (t) => {
    // Each stands for the server's repository of an earlier session, noted with the person's.
    const w = await watchedRoot(t, [], (r) => {
      gitDir(join(r, 'p', 'a', '.git'));
      gitDir(join(r, 'p', 'b', '.git'));
      // A work tree whose `.git` is a file (a --separate-git-dir clone), and a bare repository.
      mkdirSync(join(r, 'q', 'a'), { recursive: true });
      writeFileSync(join(r, 'q', 'a', '.git'), `gitdir: ${join(r, 's.git')}\n`);
      gitDir(join(r, 's.git'));
      gitDir(join(r, 'q', 'b'));
    });
    // The person's moved out of the way, the other moved into its place.
    renameSync(join(w.r, 'p', 'a'), join(w.r, 'p', 'a-old'));
    await w.quietNow();
    renameSync(join(w.r, 'q', 'a'), join(w.r, 'p', 'a'));
    await w.quietNow();
    t.same(w.planted, [join(w.r, 'p', 'a', '.git')], 'a .git file in its place: moved aside');
    renameSync(join(w.r, 'p', 'b'), join(w.r, 'p', 'b-old'));
    await w.quietNow();
    renameSync(join(w.r, 'q', 'b'), join(w.r, 'p', 'b'));
    await w.quietNow();
    t.same(
      w.planted.slice(1),
      [join(w.r, 'p', 'b', 'config')],
      'a bare one in its place: its code',
    );
  },
);

void t.test(
  'the config of a git directory not named .git, replaced: stopped at once',
  async (t) => {
    const w = await watchedRoot(t, [], (r) => {
      mkdirSync(join(r, 'w'));
      writeFileSync(join(r, 'w', '.git'), `gitdir: ${join(r, 's.git')}\n`);
      gitDir(join(r, 's.git'));
    });
    // No deny pattern names it (the layout makes it read-only by its own rule).
    const config = join(w.r, 's.git', 'config');
    writeFileSync(`${config}.lock`, '[core]\n[remote "origin"]\n');
    renameSync(`${config}.lock`, config);
    await w.quietNow();
    t.equal(w.reports.find((d) => d.path === config)?.access, 'all', 'stopped at once');
  },
);

void t.test("where the person's linked worktree stood, git's files are the server's", async (t) => {
  // Whatever they say: what a file says could change unseen once looked at (through a second
  // name, or a descriptor the server keeps), and a `.git` file taken for the person's by what it
  // names let a server's repository in (an attacker pass). The person's own worktree removed and
  // added again there is moved aside like the server's (docs/security.md says so).
  const w = await watchedRoot(t, [], (r) => {
    gitDir(join(r, 'repo', '.git'));
    worktreeDir(join(r, 'repo', '.git', 'worktrees', 'wt'), '../..');
    mkdirSync(join(r, 'wt'));
    writeFileSync(join(r, 'wt', '.git'), `gitdir: ${join(r, 'repo', '.git', 'worktrees', 'wt')}\n`);
  });
  const wt = join(w.r, 'repo', '.git', 'worktrees', 'wt');
  rmSync(wt, { recursive: true });
  await w.quietNow();
  worktreeDir(wt, '../..');
  await w.quietNow();
  t.same(w.planted, [join(wt, 'commondir')], 'a commondir as git writes it: handed on');
  // The checkout's place: a `.git` file naming the worktree, as git writes it.
  renameSync(join(w.r, 'wt'), join(w.r, 'wt-old'));
  await w.quietNow();
  mkdirSync(join(w.r, 'wt'));
  writeFileSync(join(w.r, 'wt', '.git'), `gitdir: ${wt}\n`);
  await w.quietNow();
  t.same(w.planted.slice(1), [join(w.r, 'wt', '.git')], 'a .git file as git writes it: handed on');
  // A new worktree elsewhere (no place of the person's) is nobody's business here.
  worktreeDir(join(w.r, 'repo', '.git', 'worktrees', 'wt2'), '../..');
  mkdirSync(join(w.r, 'wt2'));
  writeFileSync(
    join(w.r, 'wt2', '.git'),
    `gitdir: ${join(w.r, 'repo', '.git', 'worktrees', 'wt2')}\n`,
  );
  await w.quietNow();
  t.equal(w.planted.length, 2, 'a new worktree elsewhere: left alone');
});

void t.test("a link where the person's repository stood, or on the way there", async (t) => {
  const w = await watchedRoot(t, [], (r) => {
    gitDir(join(r, 'proj', '.git'));
    gitDir(join(r, 'a', 'repo', '.git'));
    mkdirSync(join(r, 'lib'));
  });
  gitDir(join(w.r, 'evil', '.git'));
  gitDir(join(w.r, 'evil2', 'repo', '.git'));
  await w.quietNow();
  renameSync(join(w.r, 'proj'), join(w.r, 'proj2'));
  await w.quietNow();
  symlinkSync(join(w.r, 'evil'), join(w.r, 'proj'));
  await w.quietNow();
  t.same(w.planted, [join(w.r, 'proj')], 'a link at the place: handed on');
  renameSync(join(w.r, 'a'), join(w.r, 'a2'));
  await w.quietNow();
  symlinkSync(join(w.r, 'evil2'), join(w.r, 'a'));
  await w.quietNow();
  t.same(w.planted.slice(1), [join(w.r, 'a')], 'a link on the way to the place: handed on');
  // Anywhere else, a link is nobody's business here (a package manager's, say).
  symlinkSync(join(w.r, 'evil'), join(w.r, 'lib', 'evil'));
  symlinkSync(join(w.r, 'evil'), join(w.r, 'proj2', 'evil'));
  await w.quietNow();
  w.dw.close();
  await w.dw.update(w.roots);
  t.equal(w.planted.length, 2, 'links elsewhere are left alone, by the events and the walk after');
});
