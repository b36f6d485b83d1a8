/**
 * A protected path (one kept from writes: `.git/hooks`, `.git/config`, `.vscode`, `.mcp.json`, a
 * `.git` file, a bare repository's code) that is a symbolic link in a writable root or a
 * `sandbox.write` path. The sandbox makes such a path read-only by a mount, and a mount lands on
 * what a link leads to, never on the link: the link stayed writable, and whoever reads the
 * protected name (git, a host) follows it. **Was a hole (an attacker pass):** a sandboxed server
 * renamed its own link over the person's `.git/config` or `.git/hooks` link (or over a `.git`
 * link), and the person's next `git status` ran the server's `core.fsmonitor`; a `.vscode` link
 * to a folder in the root was written through. Now such a server is not started: the host and
 * the log name the link and what to do. A link the server makes later stops it the same way
 * once its restart lays the sandbox out.
 *
 * Real daemon, real proxy under bubblewrap, the hostile fixture server with enforcement off (only
 * the sandbox stands in its way).
 */
import { existsSync, linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { sandboxedStartRefused, startBoxedHostile } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The sentence that names `link` and its rule, and what to do. */
const named = (link: string, rule: string): RegExp =>
  new RegExp(
    `cannot lay out the sandbox: ${esc(link)} is a symbolic link, and protected from writes \\(${esc(rule)}\\).*Replace the link with a copy of what it leads to \\(or remove it, if you did not make it: a server may have\\), or keep it out of the server's writable roots`,
  );

/** A repository's git directory at `git`, with `HEAD`, `objects` and `refs`. */
function gitDir(git: string): void {
  mkdirSync(join(git, 'objects'), { recursive: true });
  mkdirSync(join(git, 'refs'));
  writeFileSync(join(git, 'HEAD'), 'ref: refs/heads/main\n');
}

void t.test('a protected path that is a link in a writable place: not started', async (t) => {
  const CASES: [what: string, lay: (r: string) => string, rule: string][] = [
    [
      'hooks, a link to a folder in the root',
      (r) => {
        gitDir(join(r, 'repo/.git'));
        mkdirSync(join(r, 'repo/githooks'));
        symlinkSync('../githooks', join(r, 'repo/.git/hooks'));
        return join(r, 'repo/.git/hooks');
      },
      '**/.git/hooks',
    ],
    [
      'config, a link to a file elsewhere',
      (r) => {
        gitDir(join(r, 'repo/.git'));
        writeFileSync(join(r, '../dotfiles-config'), '[core]\n');
        symlinkSync(join(r, '../dotfiles-config'), join(r, 'repo/.git/config'));
        return join(r, 'repo/.git/config');
      },
      '**/.git/config',
    ],
    [
      '.git, a link to a git directory kept elsewhere',
      (r) => {
        gitDir(join(r, '../store/repo.git'));
        mkdirSync(join(r, 'repo'));
        symlinkSync(join(r, '../store/repo.git'), join(r, 'repo/.git'));
        return join(r, 'repo/.git');
      },
      '**/.git',
    ],
    [
      '.vscode, a link to a folder in the root',
      (r) => {
        mkdirSync(join(r, 'shared-settings'));
        symlinkSync('shared-settings', join(r, '.vscode'));
        return join(r, '.vscode');
      },
      '**/.vscode',
    ],
    [
      "a bare repository's hooks",
      (r) => {
        gitDir(join(r, 'tools.git'));
        mkdirSync(join(r, 'tools-hooks'));
        symlinkSync('../tools-hooks', join(r, 'tools.git/hooks'));
        return join(r, 'tools.git/hooks');
      },
      "a bare repository's code",
    ],
  ];
  for (const [what, lay, rule] of CASES) {
    await t.test(what, async (t) => {
      const dir = ownedShortDir(t);
      const r = join(dir, 'r');
      mkdirSync(r);
      const link = lay(r);
      const d = await startDaemon(
        t,
        `version: 1\nservers:\n  h:\n    roots:\n      - path: ${r}\n`,
        {
          dir,
        },
      );
      await sandboxedStartRefused(t, d.socket, named(link, rule), what);
    });
  }

  await t.test('.mcp.json, a link in a sandbox.write path', async (t) => {
    const dir = ownedShortDir(t);
    const r = join(dir, 'r');
    const x = join(dir, 'x');
    mkdirSync(r);
    mkdirSync(x);
    writeFileSync(join(x, 'servers.json'), '{}');
    symlinkSync('servers.json', join(x, '.mcp.json'));
    const policy =
      `version: 1\nservers:\n  h:\n    roots:\n      - path: ${r}\n` +
      `    sandbox:\n      write: [${x}]\n`;
    const d = await startDaemon(t, policy, { dir });
    await sandboxedStartRefused(
      t,
      d.socket,
      named(join(x, '.mcp.json'), '**/.mcp.json'),
      'in sandbox.write',
    );
  });

  await t.test('a protected name the policy denies outright', async (t) => {
    // `deny: [**/.claude]` replaces the built-in write deny with a whole one: the name is read
    // by the host all the same.
    const dir = ownedShortDir(t);
    const r = join(dir, 'r');
    mkdirSync(join(r, 'dotfiles-claude'), { recursive: true });
    symlinkSync('dotfiles-claude', join(r, '.claude'));
    const policy = `version: 1\nservers:\n  h:\n    roots:\n      - path: ${r}\n    deny: ["**/.claude"]\n`;
    const d = await startDaemon(t, policy, { dir });
    await sandboxedStartRefused(
      t,
      d.socket,
      new RegExp(
        `${esc(join(r, '.claude'))} is a symbolic link, and denied \\(\\*\\*/\\.claude\\)`,
      ),
      'denied',
    );
  });

  await t.test('a link on the way to a protected path as written', async (t) => {
    // The deny names `cfg/settings.json`; `cfg` is a link, in the root, to a folder outside it:
    // the layout bound where the path leads, and the server could point `cfg` at its own.
    const dir = ownedShortDir(t);
    const r = join(dir, 'r');
    mkdirSync(r);
    mkdirSync(join(dir, 'real-cfg'));
    symlinkSync('../real-cfg', join(r, 'cfg'));
    const policy =
      `version: 1\nservers:\n  h:\n    roots:\n      - path: ${r}\n` +
      `    deny:\n      - path: ${r}/cfg/settings.json\n        access: write\n`;
    const d = await startDaemon(t, policy, { dir });
    await sandboxedStartRefused(
      t,
      d.socket,
      new RegExp(
        `cannot lay out the sandbox: ${esc(join(r, 'cfg'))} is a symbolic link on the way to ${esc(join(dir, 'real-cfg', 'settings.json'))}, which is protected from writes.*Replace the link with what it leads to`,
      ),
      'a link on the way',
    );
  });

  await t.test("a link on the way to the daemon's own policy file", async (t) => {
    // The policy is read through `r/conf`, a link in the server's writable root: pointed at a
    // folder of the server's, the daemon would load the server's policy.
    const dir = ownedShortDir(t);
    const r = join(dir, 'r');
    mkdirSync(r);
    mkdirSync(join(dir, 'conf'));
    symlinkSync('../conf', join(r, 'conf'));
    const configFile = join(r, 'conf', 'mcp-roots.yaml');
    const policy = `version: 1\nservers:\n  h:\n    roots:\n      - path: ${r}\n`;
    const d = await startDaemon(t, policy, { dir, configFile });
    await sandboxedStartRefused(
      t,
      d.socket,
      new RegExp(
        `${esc(join(r, 'conf'))} is a symbolic link on the way to ${esc(join(dir, 'conf', 'mcp-roots.yaml'))}`,
      ),
      'the policy file',
    );
  });

  await t.test("a link inside a host's configuration, out to a writable place", async (t) => {
    const dir = ownedShortDir(t);
    const r = join(dir, 'r');
    mkdirSync(join(r, '.claude'), { recursive: true });
    mkdirSync(join(r, 'config'));
    writeFileSync(join(r, 'config', 'claude.json'), '{}');
    symlinkSync('../config/claude.json', join(r, '.claude', 'settings.json'));
    // One that leads where the server cannot write is left alone (below).
    symlinkSync('/etc/hostname', join(r, '.claude', 'host'));
    const d = await startDaemon(t, `version: 1\nservers:\n  h:\n    roots:\n      - path: ${r}\n`, {
      dir,
    });
    await sandboxedStartRefused(
      t,
      d.socket,
      new RegExp(
        `${esc(join(r, '.claude', 'settings.json'))} is a symbolic link in a host's configuration, to ${esc(join(r, 'config', 'claude.json'))} in the writable place ${esc(r)}`,
      ),
      'a link inside .claude',
    );
  });

  await t.test("a file inside a host's configuration with a second name", async (t) => {
    const dir = ownedShortDir(t);
    const r = join(dir, 'r');
    mkdirSync(join(r, '.claude'), { recursive: true });
    mkdirSync(join(r, 'config'));
    writeFileSync(join(r, 'config', 'claude.json'), '{}');
    linkSync(join(r, 'config', 'claude.json'), join(r, '.claude', 'settings.json'));
    const d = await startDaemon(t, `version: 1\nservers:\n  h:\n    roots:\n      - path: ${r}\n`, {
      dir,
    });
    await sandboxedStartRefused(
      t,
      d.socket,
      new RegExp(
        `${esc(join(r, '.claude', 'settings.json'))} in a host's configuration has another name`,
      ),
      'a hard link inside .claude',
    );
  });

  await t.test(
    "a host's configuration whose links stay inside it, or lead out of reach",
    async (t) => {
      const dir = ownedShortDir(t);
      const r = join(dir, 'r');
      mkdirSync(join(r, '.vscode'), { recursive: true });
      writeFileSync(join(r, '.vscode', 'base.json'), '{}');
      symlinkSync('base.json', join(r, '.vscode', 'settings.json'));
      symlinkSync('/etc/hostname', join(r, '.vscode', 'host'));
      const d = await startDaemon(
        t,
        `version: 1\nservers:\n  h:\n    roots:\n      - path: ${r}\n`,
        {
          dir,
        },
      );
      const { attempt } = await startBoxedHostile(t, d.socket);
      t.match((await attempt('write', join(r, 'ok.txt'))).text, /^ok/, 'started');
      t.match(
        (await attempt('write', join(r, '.vscode', 'base.json'))).text,
        /^EROFS/,
        'read-only',
      );
    },
  );

  await t.test('in a read-only root a link is left as it is: started', async (t) => {
    const dir = ownedShortDir(t);
    const r = join(dir, 'r');
    mkdirSync(join(r, 'shared-settings'), { recursive: true });
    symlinkSync('shared-settings', join(r, '.vscode'));
    const policy = `version: 1\nservers:\n  h:\n    roots:\n      - path: ${r}\n        readOnly: true\n`;
    const d = await startDaemon(t, policy, { dir });
    const { attempt } = await startBoxedHostile(t, d.socket);
    t.match((await attempt('list', r)).text, /\.vscode/, 'the server runs and sees the root');
  });
});

void t.test('a protected link the server makes stops it, with the reason', async (t) => {
  const dir = ownedShortDir(t);
  const r = join(dir, 'r');
  mkdirSync(join(r, 'folder'), { recursive: true });
  const d = await startDaemon(t, `version: 1\nservers:\n  h:\n    roots:\n      - path: ${r}\n`, {
    dir,
  });
  const { boxed, attempt } = await startBoxedHostile(t, d.socket);
  t.match((await attempt('write', join(r, 'ok.txt'))).text, /^ok/, 'the root is writable');
  await attempt('symlink', join(r, '.claude'), 'folder').catch(() => undefined);
  await waitFor(
    () => named(join(r, '.claude'), '**/.claude').test(boxed.stderr()),
    30_000,
    `the restart is refused, naming the link\n${boxed.stderr()}`,
  );
  // The server is gone: what it could write through the link after the stop, nothing did.
  const after = await attempt('write', join(r, 'folder/settings.json')).catch((e: Error) => ({
    text: e.message,
  }));
  t.notMatch(after.text, /^ok/, `no server answers: ${after.text}`);
  t.notOk(existsSync(join(r, 'folder/settings.json')), 'nothing was written through the link');
});
