/**
 * A sandboxed server with a writable root cannot touch an existing repository's `.git/config` or
 * `.git/hooks` (read-only mounts), but a code entry the repository did not have at the start has
 * no mount: `commondir` (which sends git to another directory's configuration), `hooks`,
 * `config.worktree`. Made by the server's own system calls, each would run outside the sandbox
 * on the person's next `git status`. The proxy's watch sees it appear and moves it aside at once
 * (proxy/git-plant.ts), and the server is stopped and started again.
 *
 * Beside it, the same server with the watch turned off (`MCP_ROOTS_PROXY_WATCH_DIRS=0`) plants a
 * `commondir`, and the system's git, run here as the person would, runs the planted command: the
 * case is not vacuous. What the watch leaves alone: a repository the server makes whole (its
 * entries are its own, and read-only from the restart on), and the person's own `git config`
 * replacing an existing `config`.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { count, restartsIdle, startBoxed } from '../helpers/boxed-server.js';
import { startDaemon } from '../helpers/daemon.js';
import type { Proxied } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

const MOVED = 'moved it aside to ';

/**
 * The proxy's lines saying it moved something aside: one per move (the restart it brings
 * repeats the reason in its own line, later, which is not another move).
 */
const movedLines = (h: Proxied): string[] =>
  h
    .stderr()
    .split('\n')
    .filter((l) => l.includes(MOVED) && !l.includes('restarting the server:'));

/** A repository as `git init` makes it, with one commit, so that `git status` has work to do. */
function gitRepo(dir: string): void {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, ...args], { stdio: 'pipe', env: GIT_ENV });
  mkdirSync(dir, { recursive: true });
  git('init', '-q');
  writeFileSync(join(dir, 'f.txt'), 'tracked\n');
  git('add', 'f.txt');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one');
}

/** git with no configuration of the person's (their fsmonitor or hooks path would change it). */
const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_PARAMETERS: undefined,
} as NodeJS.ProcessEnv;

/** `git status` in `repo`, as the person would run it outside the sandbox. */
function gitStatus(repo: string): void {
  try {
    execFileSync('git', ['-C', repo, 'status', '--short'], { stdio: 'pipe', env: GIT_ENV });
  } catch {
    // A planted configuration may make git fail; what matters is what it ran.
  }
}

/**
 * The shell commands that make `evil`, a git directory sharing the repository's `HEAD`, objects
 * and refs, whose configuration runs `touch marker` on `git status` (core.fsmonitor).
 */
const evilCommonDir = (gitDir: string, evil: string, marker: string): string =>
  `mkdir -p ${evil} && cp -r ${gitDir}/HEAD ${gitDir}/objects ${gitDir}/refs ${evil}/ && ` +
  `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = "touch ${marker}; false"\\n' > ${evil}/config`;

/** A repository at `path` whose configuration runs `touch marker` on `git status`. */
function evilRepo(path: string, marker: string): void {
  const git = (...args: string[]) => execFileSync('git', args, { stdio: 'pipe', env: GIT_ENV });
  git('init', '-q', path);
  git('-C', path, 'config', 'core.fsmonitor', `touch ${marker}; false`);
}

/** The shell command that stages, in `repo`'s index, a gitlink at `name` (a submodule to git). */
const gitlink = (repo: string, name: string): string =>
  `GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 git -C ${repo} update-index --add ` +
  `--cacheinfo 160000,${'1'.repeat(40)},${name}`;

/**
 * The shell commands that stage a gitlink at `repo/evil` and copy the repository `evil` there:
 * the person's next `git status` in `repo` runs git in `repo/evil`. Each may run again.
 */
const gitlinkedRepo = (repo: string, evil: string): string =>
  `${gitlink(repo, 'evil')} && { [ -d ${repo}/evil ] || cp -r ${evil} ${repo}/evil; }`;

/**
 * Run `change` here, as the person (or an earlier call of the server) would, and wait for the
 * restart it causes (paths denied for writing appeared) to end: a call made before that restart
 * began could be cut short by it.
 */
async function changedHere(h: Proxied, what: string, change: () => void): Promise<void> {
  const restarts = count(h, 'restarting the server:');
  change();
  await waitFor(
    () => count(h, 'restarting the server:') > restarts && restartsIdle(h),
    30_000,
    `the restart for ${what}`,
  );
}

async function shell(h: Proxied, command: string): Promise<string> {
  // The server is stopped as the entry appears: the call may be answered "call again".
  return (await h.call('attempt', { action: 'shell', ref: command }).catch(() => ({ text: '' })))
    .text;
}

/** Run `command` in the server once no restart is under way, again if a restart cut it short. */
async function shellOnce(h: Proxied, command: string, what: string): Promise<string> {
  for (let tries = 0; ; tries++) {
    await waitFor(() => restartsIdle(h), 30_000, `no restart under way before: ${what}`);
    const text = await shell(h, command);
    if (text !== '' || tries === 3) return text;
  }
}

/** Run `command` in the server, then wait until the proxy has moved something aside once more. */
async function plantUntilMoved(h: Proxied, command: string, what: string): Promise<void> {
  await waitFor(() => restartsIdle(h), 30_000, `no restart under way before: ${what}`);
  const before = movedLines(h).length;
  // A call cut short by a restart that was still to begin (its answer "call again") made
  // nothing: made again, as a host would. One cut short by the restart its own plant brought
  // about made it: the proxy logs the move before it stops the server, but its log (stderr) and
  // the call's answer (stdout) are two pipes, so the line may come after the answer; looked for
  // at once, it was missed now and then and the plant made twice.
  for (let tries = 0; tries < 4; tries++) {
    if ((await shell(h, command)) !== '') break;
    const moved = await waitFor(() => movedLines(h).length > before, 2_000, 'the move').then(
      () => true,
      () => false,
    );
    if (moved) break;
    await waitFor(() => restartsIdle(h), 30_000, `no restart under way before again: ${what}`);
  }
  await waitFor(() => movedLines(h).length > before, 30_000, `the proxy moved aside: ${what}`);
  await waitFor(() => restartsIdle(h), 30_000, `the restart after: ${what}`);
}

/** The entries of `dir` moved aside by the proxy, whose names begin with `name`. */
const movedAside = (dir: string, name: string): string[] =>
  readdirSync(dir).filter((e) => e.startsWith(`${name}.moved-by-mcp-roots-`));

/**
 * The person's repository `r/repo` with one commit, and a daemon whose policy gives server `h`
 * the root `r`, writable. The server is started by the test, after anything else it makes.
 */
async function personsRepo(t: Test) {
  const dir = ownedShortDir(t);
  const r = join(dir, 'r');
  const repo = join(r, 'repo');
  gitRepo(repo);
  const d = await startDaemon(t, `version: 1\nservers:\n  h:\n    roots:\n      - path: ${r}\n`, {
    dir,
  });
  return { dir, r, repo, gitDir: join(repo, '.git'), socket: d.socket };
}

void t.test('git code entries a sandboxed server makes in an existing repository', async (t) => {
  const { dir, r, repo, gitDir, socket } = await personsRepo(t);
  // A submodule's git directory, as `git submodule` keeps it, without a commondir of its own.
  const modDir = join(gitDir, 'modules', 'sub');
  mkdirSync(modDir, { recursive: true });
  execFileSync('git', ['init', '-q', '--bare', modDir], { stdio: 'pipe', env: GIT_ENV });
  // `git init` made hooks/ from its templates: this repository has none, as some clones do.
  execFileSync('rm', ['-rf', join(modDir, 'hooks')]);
  // One with nothing mounted below its `.git`, so that the server can rename it; two more whose
  // HEAD the server renames away.
  const plain = join(r, 'plain');
  gitRepo(plain);
  gitRepo(join(r, 'deep', 'main'));
  gitRepo(join(r, 'deep2'));
  mkdirSync(join(repo, 'src', 'lib'), { recursive: true });
  const h = await startBoxed(t, socket);

  await t.test('a commondir sending git to a configuration the server wrote', async (t) => {
    const marker = join(dir, 'ran-commondir');
    await plantUntilMoved(
      h,
      // Written beside and renamed in: made in place, the stop could come between the open (the
      // event) and the write, and the file moved aside would be empty.
      `${evilCommonDir(gitDir, join(r, 'evil'), marker)} && printf '%s\\n' ${join(r, 'evil')} > ${gitDir}/cd.tmp && mv ${gitDir}/cd.tmp ${gitDir}/commondir`,
      'commondir',
    );
    t.notOk(existsSync(join(gitDir, 'commondir')), 'no commondir is left where git reads it');
    const aside = movedAside(gitDir, 'commondir');
    t.equal(aside.length, 1, 'it is kept beside, under a name git does not read');
    t.equal(readFileSync(join(gitDir, aside[0]!), 'utf8'), `${join(r, 'evil')}\n`, 'as written');
    t.match(h.stderr(), `${join(gitDir, 'commondir')} appeared in the git directory ${gitDir}`);
    t.match(h.stderr(), 'stopping the server now', 'the server was stopped');
    // And the restart (and a call it cut short) says why, not that a denied path appeared.
    t.match(
      h.stderr(),
      `restarting the server: ${join(gitDir, 'commondir')} appeared in the git directory`,
    );
    gitStatus(repo);
    t.notOk(existsSync(marker), 'git status outside the sandbox runs nothing of the server');
    t.match((await shell(h, 'echo alive')).trim(), /alive/, 'the session goes on');
  });

  await t.test('a hooks directory renamed into place, whole', async (t) => {
    const prep = join(gitDir, 'prep');
    await plantUntilMoved(
      h,
      `mkdir ${prep} && printf '#!/bin/sh\\ntouch ${dir}/ran-hook\\n' > ${prep}/post-checkout && ` +
        `chmod +x ${prep}/post-checkout && mv ${prep} ${join(modDir, 'hooks')}`,
      'hooks',
    );
    t.notOk(existsSync(join(modDir, 'hooks')), 'no hooks directory is left');
    t.equal(movedAside(modDir, 'hooks').length, 1, 'the directory is kept beside, whole');
  });

  await t.test('a config.worktree that is a link', async (t) => {
    writeFileSync(join(r, 'wt.cfg'), '[core]\n\tfsmonitor = "touch /nonexistent; false"\n');
    await plantUntilMoved(
      h,
      `ln -s ${join(r, 'wt.cfg')} ${gitDir}/config.worktree`,
      'config.worktree',
    );
    t.notOk(existsSync(join(gitDir, 'config.worktree')), 'no link is left');
    t.equal(movedAside(gitDir, 'config.worktree').length, 1, 'the link is kept beside');
  });

  await t.test('a commondir in a submodule git directory', async (t) => {
    await plantUntilMoved(h, `printf '%s\\n' ${join(r, 'evil')} > ${modDir}/commondir`, 'sub');
    t.notOk(existsSync(join(modDir, 'commondir')), 'moved from the submodule too');
  });

  await t.test('a repository of its own copied into the work tree, with a gitlink', async (t) => {
    const marker = join(dir, 'ran-gitlink');
    const evil = join(r, 'stage', 'evil');
    await changedHere(h, 'a repository of its own', () => evilRepo(evil, marker));
    await plantUntilMoved(h, gitlinkedRepo(repo, evil), 'gitlink');
    t.notOk(existsSync(join(repo, 'evil', '.git', 'config')), 'its config is moved aside');
    gitStatus(repo);
    t.notOk(existsSync(marker), 'git status in the repository runs nothing of the server');
  });

  await t.test('a .git file leading to a repository of its own, with a gitlink', async (t) => {
    const marker = join(dir, 'ran-gitfile');
    const evil = join(r, 'stage2', 'evil');
    await changedHere(h, 'a repository of its own', () => evilRepo(evil, marker));
    await plantUntilMoved(
      h,
      `${gitlink(repo, 'sub2')} && mkdir -p ${repo}/sub2 && ` +
        `echo 'gitdir: ${evil}/.git' > ${repo}/sub2/.git`,
      'gitfile',
    );
    t.notOk(existsSync(join(repo, 'sub2', '.git')), 'the .git file is moved aside');
    gitStatus(repo);
    t.notOk(existsSync(marker), 'git status in the repository runs nothing of the server');
  });

  await t.test('a repository cloned during the session, then a commondir', async (t) => {
    const clone = join(r, 'clone');
    await changedHere(h, 'the clone', () =>
      execFileSync('git', ['clone', '-q', repo, clone], { stdio: 'pipe', env: GIT_ENV }),
    );
    t.same(movedAside(join(clone, '.git'), 'config'), [], "the clone's own entries stay");
    await plantUntilMoved(h, `printf '%s\\n' /x > ${clone}/.git/commondir`, 'clone commondir');
    t.notOk(existsSync(join(clone, '.git', 'commondir')), 'what the server adds is moved aside');
  });

  await t.test("the person's repository moved into one of the server's and back", async (t) => {
    const marker = join(dir, 'ran-moved');
    const other = join(r, 'other');
    const gitDir = join(plain, '.git');
    // One call each, so that a restart between them (the new repository's entries restart the
    // server) cuts none short; each can be made again.
    const G = 'GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 git';
    await shellOnce(h, `[ -d ${other}/.git ] || ${G} init -q ${other}`, 'its own repository');
    await shellOnce(h, `[ -d ${other}/plain ] || mv ${plain} ${other}/plain`, 'the move in');
    await shellOnce(h, `[ -d ${plain} ] || mv ${other}/plain ${plain}`, 'the move back');
    await shellOnce(
      h,
      `printf '[core]\\n\\tfsmonitor = "touch ${marker}; false"\\n' > ${gitDir}/config`,
      'the config',
    );
    await waitFor(() => restartsIdle(h), 30_000, 'no restart under way after the moves');
    t.same(movedAside(gitDir, 'config'), [], "the person's config is not moved aside");
    t.same(movedAside(gitDir, 'hooks'), [], 'nor their hooks');
    gitStatus(plain);
    t.notOk(existsSync(marker), 'git status in the repository runs nothing of the server');
  });

  await t.test("a repository git finds once the person's own cannot be read", async (t) => {
    const config = (marker: string, more = '') =>
      `printf '[core]\\n\\trepositoryformatversion = 0\\n${more}\\tfsmonitor = "touch ${marker}; false"\\n'`;
    // Above it: `deep/.git`, found from `deep/main` once its HEAD is gone.
    const above = join(dir, 'ran-above');
    const deep = join(r, 'deep');
    await shellOnce(
      h,
      `{ [ ! -e ${deep}/main/.git/HEAD ] || mv ${deep}/main/.git/HEAD ${deep}/main/.git/HEAD.x; } && ` +
        `mkdir -p ${deep}/.git/objects ${deep}/.git/refs/heads && printf 'ref: refs/heads/main\\n' > ${deep}/.git/HEAD`,
      'a git directory above',
    );
    await plantUntilMoved(h, `${config(above)} > ${deep}/.git/config`, 'config above');
    // In its own place: the work tree's folder made a bare repository that names it.
    const bare = join(dir, 'ran-bare');
    const deep2 = join(r, 'deep2');
    await shellOnce(
      h,
      `{ [ ! -e ${deep2}/.git/HEAD ] || mv ${deep2}/.git/HEAD ${deep2}/.git/HEAD.x; } && ` +
        `mkdir -p ${deep2}/objects ${deep2}/refs/heads && printf 'ref: refs/heads/main\\n' > ${deep2}/HEAD`,
      'a bare repository in its place',
    );
    await plantUntilMoved(
      h,
      `${config(bare, `\\tbare = false\\n\\tworktree = ${deep2}\\n`)} > ${deep2}/config`,
      'config in its place',
    );
    t.notOk(existsSync(join(deep, '.git', 'config')), 'the config above is moved aside');
    t.notOk(existsSync(join(deep2, 'config')), 'the config in its place is moved aside');
    gitStatus(join(deep, 'main'));
    gitStatus(deep2);
    t.notOk(existsSync(above), 'git status runs nothing of the server (above)');
    t.notOk(existsSync(bare), 'git status runs nothing of the server (in its place)');

    // Below it: a folder of the work tree made a bare repository, which git run there takes
    // before the repository's own.
    const below = join(dir, 'ran-below');
    const src = join(repo, 'src');
    await shellOnce(
      h,
      `mkdir -p ${src}/objects/info ${src}/refs/heads && echo ${gitDir}/objects > ${src}/objects/info/alternates && ` +
        `cat ${gitDir}/refs/heads/* > ${src}/refs/heads/main && printf 'ref: refs/heads/main\\n' > ${src}/HEAD`,
      'a bare repository below',
    );
    await plantUntilMoved(
      h,
      `${config(below, '\\tbare = false\\n\\tworktree = ..\\n')} > ${src}/config`,
      'config below',
    );
    t.notOk(existsSync(join(src, 'config')), 'the config below is moved aside');
    gitStatus(join(src, 'lib'));
    t.notOk(existsSync(below), 'git status runs nothing of the server (below)');
  });

  await t.test('what is left as it is', async (t) => {
    const moved = movedLines(h).length;
    const seen = count(h, 'a path denied for writing appeared in the roots');
    const replaced = count(h, 'and its read-only mount in the sandbox with it');
    // A repository the server makes whole is its own (docs/security.md says so).
    const own = join(r, 'own', '.git');
    await shellOnce(
      h,
      `mkdir -p ${own}/objects ${own}/refs ${own}/hooks && echo 'ref: refs/heads/main' > ${own}/HEAD && : > ${own}/config`,
      'its own repository',
    );
    // The person's own `git config` outside: a new config renamed over the existing one.
    writeFileSync(join(gitDir, 'config.new'), readFileSync(join(gitDir, 'config')));
    renameSync(join(gitDir, 'config.new'), join(gitDir, 'config'));
    // The new repository's entries restart the server as protected paths appearing; the
    // person's config replaced stops it at once (its read-only mount went with the old file).
    await waitFor(
      () =>
        count(h, 'a path denied for writing appeared in the roots') > seen &&
        count(h, 'and its read-only mount in the sandbox with it') > replaced &&
        restartsIdle(h),
      30_000,
      'the watch saw both',
    );
    t.same(movedLines(h).slice(moved), [], 'nothing moved aside');
    t.ok(existsSync(join(own, 'config')), "the server's new repository keeps its config");
    t.ok(existsSync(join(gitDir, 'config')), 'the replaced config stays');
  });

  await t.test('a repository of its own renamed in under a protected name', async (t) => {
    // `.vscode` is denied for writing, so the watch does not enter it; git does, behind a gitlink.
    const marker = join(dir, 'ran-protected');
    const evil = join(r, 'stage4', 'evil');
    await changedHere(h, 'a repository of its own', () => evilRepo(evil, marker));
    await plantUntilMoved(
      h,
      `${gitlink(repo, '.vscode')} && { [ -d ${repo}/.vscode ] || mv ${evil} ${repo}/.vscode; }`,
      'protected name',
    );
    // Its hooks and config may be found by two walks (the event's, and the restart's plan), so
    // the first move line may come before the second move.
    const config = join(repo, '.vscode', '.git', 'config');
    await waitFor(() => !existsSync(config), 10_000, 'its config moved aside').catch(() => {
      console.error(
        'DEBUG',
        execFileSync('ls', ['-la', join(repo, '.git', 'worktrees', 'wt')]).toString(),
        h.stderr().split('\n').slice(-40).join('\n'),
      );
    });
    t.pass('its config is moved aside');
    gitStatus(repo);
    t.notOk(existsSync(marker), 'git status in the repository runs nothing of the server');
  });

  // Last: the name left in the work tree makes later layouts hide the repository (sandbox-mounts.ts).
  await t.test('a repository of its own renamed in under a name that is not UTF-8', async (t) => {
    const marker = join(dir, 'ran-unnamed');
    const evil = join(r, 'stage3', 'evil');
    await changedHere(h, 'a repository of its own', () => evilRepo(evil, marker));
    // The name `x\377y`, made by the shell (a string argument cannot hold the byte).
    const name = `"$(printf 'x\\377y')"`;
    await plantUntilMoved(
      h,
      `GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 git -C ${repo} update-index --add ` +
        `--cacheinfo 160000,${'1'.repeat(40)},${name} && mv ${evil} ${repo}/${name}`,
      'unnamed',
    );
    const names = readdirSync(repo, { encoding: 'latin1' });
    t.same(
      names.filter((n) => n.startsWith('x\xffy')),
      [],
      'nothing by that name is left (nor by a name a gitlink could have been staged for)',
    );
    const aside = names.filter((n) => n.startsWith('mcp-roots-moved-'));
    t.equal(aside.length, 1, 'it is moved aside under a random name that is UTF-8...');
    await waitFor(
      () => !existsSync(join(repo, aside[0]!, '.git', 'config')),
      10_000,
      "...where the watch walks it, and moves its repository's config aside",
    );
    gitStatus(repo);
    t.notOk(existsSync(marker), 'git status in the repository runs nothing of the server');
  });
});

void t.test(
  "the person's linked worktree removed and added again while the server runs",
  async (t) => {
    // Where it stood, git's files are the server's whatever they say (what a file says could
    // change unseen once looked at): the person's own are moved aside like the server's, and the
    // log says so (docs/security.md, "Your own git work inside a repository while the server
    // runs").
    const { r, repo, socket } = await personsRepo(t);
    const wt = join(r, 'wt');
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', repo, ...args], { stdio: 'pipe', env: GIT_ENV, encoding: 'utf8' });
    git('worktree', 'add', '-q', wt, '-b', 'br');
    const h = await startBoxed(t, socket);
    await waitFor(() => restartsIdle(h), 30_000, 'started');
    git('worktree', 'remove', '--force', wt);
    try {
      git('worktree', 'add', '-q', wt, 'br');
    } catch {
      // git fails once its files are moved aside, or later commands in the worktree do.
    }
    await waitFor(() => movedLines(h).length > 0, 30_000, 'the move');
    t.ok(
      movedLines(h).every(
        (l) => l.includes(join(repo, '.git', 'worktrees', 'wt')) || l.includes(wt),
      ),
      'what git wrote where the worktree stood is moved aside, and nothing else',
    );
  },
);

void t.test(
  "a .git file where the person's worktree checkout stood, naming a worktree directory of the server's",
  async (t) => {
    // The checkout renamed away and a `.git` file put in its place, naming a worktree directory
    // whose commondir says what git writes, then rewritten through a second name once the
    // restart has made it read-only (an attacker pass): git's files where the person's stood are
    // the server's whatever they say.
    const { dir, r, repo, gitDir, socket } = await personsRepo(t);
    const wt = join(r, 'wt');
    execFileSync('git', ['-C', repo, 'worktree', 'add', '-q', wt, '-b', 'br'], {
      stdio: 'pipe',
      env: GIT_ENV,
    });
    const h = await startBoxed(t, socket);
    await waitFor(() => restartsIdle(h), 30_000, 'started');
    const marker = join(dir, 'ran-worktree');
    const ours = join(gitDir, 'worktrees', 'ours');
    const evil = join(r, 'evil');
    // Each step once: the call may be cut short by a restart, and made again.
    const made = await shellOnce(
      h,
      `{ [ -e ${evil}/config ] || { ${evilCommonDir(gitDir, evil, marker)}; }; } && ` +
        `mkdir -p ${ours} && cp -f ${gitDir}/worktrees/wt/HEAD ${gitDir}/worktrees/wt/gitdir ${ours}/ && ` +
        `{ [ -e ${ours}/h ] || { printf '../..\\n' > ${ours}/h && ln ${ours}/h ${ours}/commondir; }; } && ` +
        `{ [ -e ${r}/wt-old ] || mv ${wt} ${r}/wt-old; } && mkdir -p ${wt} && ` +
        `{ [ -e ${r}/done ] || { printf 'gitdir: %s\\n' ${ours} > ${wt}/.git && touch ${r}/done; }; } && echo made`,
      'a worktree directory of its own, named from the place',
    );
    t.match(made, /made/, 'the server made it all');
    await waitFor(() => restartsIdle(h), 30_000, 'the restart after');
    await shellOnce(h, `printf '%s\\n' ${evil} > ${ours}/h && echo written`, 'written through');
    gitStatus(wt);
    t.notOk(
      existsSync(marker),
      "git status where the person's worktree was runs nothing of the server's",
    );
    t.ok(
      movedLines(h).some((l) => l.includes(join(wt, '.git'))),
      "the .git file put where the person's checkout stood is moved aside",
    );
  },
);

void t.test('without the watch, a planted commondir runs outside the sandbox', async (t) => {
  const { dir, r, repo, gitDir, socket } = await personsRepo(t);
  const blind = await startBoxed(t, socket, { MCP_ROOTS_PROXY_WATCH_DIRS: '0' });
  const marker = join(dir, 'ran-commondir');
  t.match(
    await shell(
      blind,
      `${evilCommonDir(gitDir, join(r, 'evil'), marker)} && printf '%s\\n' ${join(r, 'evil')} > ${gitDir}/commondir && echo planted`,
    ),
    /planted/,
    'the sandbox lets the server write a commondir the repository did not have',
  );
  gitStatus(repo);
  t.ok(existsSync(marker), "git status outside ran the server's command");
  rmSync(join(gitDir, 'commondir'));

  const linked = join(dir, 'ran-gitlink');
  const evil = join(r, 'stage', 'evil');
  evilRepo(evil, linked);
  t.match(
    await shell(blind, `${gitlinkedRepo(repo, evil)} && echo planted`),
    /planted/,
    'nor does it stop a gitlink and a repository of its own in the work tree',
  );
  gitStatus(repo);
  t.ok(existsSync(linked), "git status in the person's repository ran the server's command");
});

void t.test("a .git file of an earlier session carried into the person's work tree", async (t) => {
  // Session 1: the server makes a git directory of its own and a `.git` file naming it, out of
  // every work tree (its own repository: left alone). Session 2's first walk cannot tell them
  // from the person's; the server stages a gitlink in the person's repository and carries the
  // `.git` file's directory there, where git enters it.
  const { dir, r, repo, socket } = await personsRepo(t);
  const marker = join(dir, 'ran-carried');
  const g = join(r, 'store', 'g');
  const first = await startBoxed(t, socket);
  await shellOnce(
    first,
    `mkdir -p ${g}/objects ${g}/refs/heads ${r}/evil && printf 'ref: refs/heads/main\\n' > ${g}/HEAD && ` +
      `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = "touch ${marker}; false"\\n' > ${g}/config && ` +
      `printf 'gitdir: ${g}\\n' > ${r}/evil/.git`,
    'the first session',
  );
  await waitFor(() => restartsIdle(first), 30_000, 'the first session quiet');
  await first.client.close();

  const h = await startBoxed(t, socket);
  const G = 'GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 git';
  await shellOnce(
    h,
    `${G} -C ${repo} update-index --add --cacheinfo 160000,${'1'.repeat(40)},evil && ` +
      `{ [ -d ${repo}/evil ] || mv ${r}/evil ${repo}/evil; }`,
    'the carry',
  );
  await waitFor(() => movedAside(join(repo, 'evil'), '.git').length > 0, 30_000, 'the move');
  await waitFor(() => restartsIdle(h), 30_000, 'no restart under way after the carry');
  t.notOk(existsSync(join(repo, 'evil', '.git')), 'the .git file is moved aside');
  gitStatus(repo);
  t.notOk(existsSync(marker), "the person's git status runs nothing of the server");
});

void t.test('a link the person reaches their repository by, re-pointed', async (t) => {
  // `proj -> repo`: the person's `git -C proj status` runs in `repo`. The server puts a link of
  // its own there, to a repository of its own.
  const { dir, r, socket } = await personsRepo(t);
  symlinkSync('repo', join(r, 'proj'));
  const marker = join(dir, 'ran-relinked');
  const h = await startBoxed(t, socket);
  await shellOnce(
    h,
    `mkdir -p ${r}/evil/.git/objects ${r}/evil/.git/refs/heads && printf 'ref: refs/heads/main\\n' > ${r}/evil/.git/HEAD && ` +
      `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = "touch ${marker}; false"\\n' > ${r}/evil/.git/config && ` +
      `ln -s evil ${r}/p2 && mv -T ${r}/p2 ${r}/proj`,
    'the re-point',
  );
  await waitFor(() => movedAside(r, 'proj').length > 0, 30_000, 'the move');
  await waitFor(() => restartsIdle(h), 30_000, 'no restart under way after the re-point');
  t.notOk(existsSync(join(r, 'proj')), 'the new link is moved aside');
  gitStatus(join(r, 'proj'));
  t.notOk(existsSync(marker), "the person's git status runs nothing of the server");
});

void t.test(
  "a link where the person's repository stood, or on the way there, once it is moved away",
  async (t) => {
    // The person's `git -C a/repo status` follows a link wherever it leads: the server moves the
    // repository (or the folder above it) away and puts a link to a repository of its own there.
    const { dir, r, socket } = await personsRepo(t);
    gitRepo(join(r, 'a', 'deep'));
    const marker = join(dir, 'ran-linked-place');
    const h = await startBoxed(t, socket);
    const evil = (path: string) =>
      `mkdir -p ${path}/.git/objects ${path}/.git/refs/heads && printf 'ref: refs/heads/main\\n' > ${path}/.git/HEAD && ` +
      `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = "touch ${marker}; false"\\n' > ${path}/.git/config`;
    await shellOnce(
      h,
      `{ [ -e ${r}/evil/.git ] || { ${evil(`${r}/evil`)}; }; } && ` +
        `{ [ -e ${r}/repo-away ] || mv ${r}/repo ${r}/repo-away; } && ln -sfn evil ${r}/repo && echo linked`,
      'a link at the place',
    );
    await waitFor(() => movedAside(r, 'repo').length > 0, 30_000, 'the move of the link');
    await shellOnce(
      h,
      `{ [ -e ${r}/other/deep/.git ] || { ${evil(`${r}/other/deep`)}; }; } && ` +
        `{ [ -e ${r}/a-away ] || mv ${r}/a ${r}/a-away; } && ln -sfn other ${r}/a && echo linked`,
      'a link on the way',
    );
    await waitFor(() => movedAside(r, 'a').length > 0, 30_000, 'the move of the link on the way');
    await waitFor(() => restartsIdle(h), 30_000, 'no restart under way after the links');
    gitStatus(join(r, 'repo'));
    gitStatus(join(r, 'a', 'deep'));
    t.notOk(existsSync(marker), "the person's git status runs nothing of the server");
  },
);
