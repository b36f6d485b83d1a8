/**
 * `npx PKG` under --sandbox runs a package from npx's cache and shows it read-only (proxy/npx.ts,
 * npx-cache-entry.ts, program.ts). A security review found the cache trusted as npm's own work:
 * a cache in a root the server writes let it leave a higher version that ran next start; a copy
 * named to sort first won a tie of versions; a bin of `../../../secret` (or a link to a directory)
 * was shown to the server; and the search for a script's package climbed out of the server's root
 * to show a whole directory above it. Real files laid out as npm lays them out; the last test runs
 * real bwrap.
 */
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t from 'tap';
import { npxInstallDir, resolveNpx } from '../../proxy/npx.js';
import { programPaths } from '../../proxy/program.js';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, proxiedTransport } from '../helpers/proxied-server.js';
import { ownedShortDir } from '../helpers/proxy.js';

const launch = (args: string[]) => ({ command: 'npx', args, env: [] });

/** @x/srv in npx's cache entry `hash`, as npm installs it; its bin `bin` (cli.mjs unless told). */
function cachedServer(cache: string, hash: string, version: string, bin = 'cli.mjs'): string {
  const dir = join(cache, '_npx', hash, 'node_modules/@x/srv');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: '@x/srv', version, bin: { srv: bin } }),
  );
  writeFileSync(
    join(dir, 'cli.mjs'),
    `#!/usr/bin/env node\n${readFileSync(HOSTILE_SERVER, 'utf8')}`,
  );
  chmodSync(join(dir, 'cli.mjs'), 0o755);
  return dir;
}

const context = (dir: string, cache: string) => ({
  env: { PATH: process.env.PATH, npm_config_cache: cache },
  cwd: dir,
  home: join(dir, 'h'),
});

void t.test('a cache entry where the server may write is refused, saying where', async (t) => {
  const dir = ownedShortDir(t);
  const cache = join(dir, 'root/npm');
  cachedServer(cache, 'aaa', '1.0.0');
  // What the server leaves when the cache lies in its root: a higher version, which would run.
  const planted = cachedServer(cache, 'zzz', '99.0.0');
  const ctx = context(dir, cache);
  t.match(
    await resolveNpx(launch(['@x/srv']), ctx, [join(dir, 'elsewhere')]),
    { launch: { args: [join(planted, 'cli.mjs')] } },
    'a root elsewhere changes nothing',
  );
  for (const own of [
    join(dir, 'root'), // the cache in a root
    join(cache, '_npx/zzz'), // an entry as a sandbox.write path
    join(planted, 'node_modules'), // a writable path inside the entry
  ]) {
    t.match(
      await resolveNpx(launch(['@x/srv']), ctx, [own]),
      {
        problem: new RegExp(
          `^npx @x/srv: its copy in npx's cache, ${planted}, lies where the server may write \\(${own}:.*npm_config_cache`,
        ),
      },
      own,
    );
  }
  // The bin leads (by a link) into a place the server may write.
  mkdirSync(join(dir, 'w'));
  writeFileSync(join(dir, 'w/cli.mjs'), 'planted');
  const linked = cachedServer(join(dir, 'npm2'), 'aaa', '1.0.0', 'via-link.mjs');
  symlinkSync(join(dir, 'w/cli.mjs'), join(linked, 'via-link.mjs'));
  t.match(await resolveNpx(launch(['@x/srv']), context(dir, join(dir, 'npm2')), [join(dir, 'w')]), {
    problem: /lies where the server may write \(.*\/w:/,
  });
});

void t.test('a bin that is not a file inside its package is refused', async (t) => {
  const dir = ownedShortDir(t);
  mkdirSync(join(dir, 'home/.ssh'), { recursive: true });
  writeFileSync(join(dir, 'home/.ssh/id_rsa'), 'SECRET');
  const cases: [string, (pkg: string) => string][] = [
    ['up and out', () => '../../../../../home/.ssh/id_rsa'],
    ['a link to a file outside', (pkg) => link(pkg, join(dir, 'home/.ssh/id_rsa'))],
    ['a link to a directory', (pkg) => link(pkg, join(dir, 'home/.ssh'))],
    ['a directory inside', () => '.'],
    ['nothing', () => 'gone.mjs'],
  ];
  function link(pkg: string, to: string): string {
    symlinkSync(to, join(pkg, 'bin.mjs'));
    return 'bin.mjs';
  }
  for (const [i, [what, bin]] of cases.entries()) {
    const cache = join(dir, `npm${i}`);
    cachedServer(cache, 'aaa', '1.0.0');
    const pkg = cachedServer(cache, 'bbb', '1.0.1');
    const rel = bin(pkg);
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({ name: '@x/srv', version: '1.0.1', bin: { srv: rel } }),
    );
    t.match(
      await resolveNpx(launch(['@x/srv']), context(dir, cache)),
      {
        problem: new RegExp(
          `^npx @x/srv: the bin "${rel.replace(/\./g, '\\.')}" of its copy in npx's cache, ${pkg}, leads to .*not a file inside that package.*Remove ${dirname(dirname(dirname(pkg)))} .*-p @x/srv@1\\.0\\.1`,
        ),
      },
      what,
    );
  }
});

void t.test('two copies of the chosen version: refused as ambiguous, naming both', async (t) => {
  const dir = ownedShortDir(t);
  const cache = join(dir, 'npm');
  cachedServer(cache, 'aaa', '1.0.0');
  const genuine = cachedServer(cache, 'bbb', '1.10.0');
  // Named to sort first: picked by name order, it would win.
  const first = cachedServer(cache, '0aa', '1.10.0');
  for (const spec of ['@x/srv', '@x/srv@1.10.0', '@x/srv@^1']) {
    t.match(
      await resolveNpx(launch([spec]), context(dir, cache)),
      {
        problem: new RegExp(
          `holds @x/srv 1\\.10\\.0 more than once \\(${first}, ${genuine}\\).*Remove all but one`,
        ),
      },
      spec,
    );
  }
  t.match(
    await resolveNpx(launch(['@x/srv@1.0.0']), context(dir, cache)),
    { launch: { args: [join(cache, '_npx/aaa/node_modules/@x/srv/cli.mjs')] } },
    'another version is still found',
  );
});

void t.test('two copies of one version, one where npx installs the spec: that one', async (t) => {
  // npx caches `PKG` and `PKG@latest` in two directories, often at the same version (as on any
  // machine that ran both): the one npx installs this very spec in is the one it runs.
  const dir = ownedShortDir(t);
  const cache = join(dir, 'npm');
  const hashOf = (spec: string) => basename(npxInstallDir(cache, spec));
  t.equal(
    hashOf('@modelcontextprotocol/server-memory'),
    '15b07286cbcc3329',
    "npx's own directory for a spec, as npm 10 names it",
  );
  const bare = cachedServer(cache, hashOf('@x/srv'), '1.10.0');
  const latest = cachedServer(cache, hashOf('@x/srv@latest'), '1.10.0');
  cachedServer(cache, '0aa', '1.10.0');
  for (const [spec, dirOf] of [
    ['@x/srv', bare],
    ['@x/srv@latest', latest],
  ] as const) {
    t.match(
      await resolveNpx(launch(['-y', spec]), context(dir, cache)),
      { launch: { args: [join(dirOf, 'cli.mjs')] } },
      spec,
    );
  }
  t.match(
    await resolveNpx(launch(['@x/srv@1.10.0']), context(dir, cache)),
    { problem: /more than once .* none is where npx installs this spec/ },
    'a spec whose own directory holds none of them: still refused',
  );
});

void t.test("a script's package is looked for no higher than its root or package", async (t) => {
  const dir = ownedShortDir(t);
  // A file at the top of the server's root, and a package.json above the root.
  writeFileSync(join(dir, 'package.json'), '{}');
  mkdirSync(join(dir, 'root'));
  writeFileSync(join(dir, 'root/x.mjs'), '');
  // A home elsewhere: the test's directory, above it, would be too wide to show at all.
  const ctx = { ...context(dir, join(dir, 'npm')), home: '/nonexistent-home' };
  const paths = (script: string, serverOwn: string[]) =>
    programPaths('node', [script], { ...ctx, serverOwn });
  t.ok((await paths(join(dir, 'root/x.mjs'), [])).includes(dir), 'unbounded, it climbs');
  t.notOk(
    (await paths(join(dir, 'root/x.mjs'), [join(dir, 'root')])).some((p) => dir.startsWith(p)),
    'not above the root',
  );
  // A file in an installed package with no package.json of its own: not the project around it.
  const pkg = join(dir, 'p/node_modules/@x/srv');
  mkdirSync(join(pkg, 'lib'), { recursive: true });
  writeFileSync(join(dir, 'p/package.json'), '{}');
  writeFileSync(join(pkg, 'lib/cli.mjs'), '');
  const shown = await paths(join(pkg, 'lib/cli.mjs'), []);
  t.notOk(shown.includes(join(dir, 'p')), 'not the project');
  t.ok(shown.includes(join(dir, 'p/node_modules')), 'its node_modules, which Node resolves from');

  // A project's command that leads to a file in node_modules but in no package there.
  const project = join(dir, 'proj');
  mkdirSync(join(project, 'node_modules/.bin'), { recursive: true });
  writeFileSync(join(project, 'package.json'), '{}');
  writeFileSync(join(project, 'node_modules/x.mjs'), '#!/usr/bin/env node\n', { mode: 0o755 });
  symlinkSync('../x.mjs', join(project, 'node_modules/.bin/x'));
  t.match(await resolveNpx(launch(['x']), { ...ctx, cwd: project }), {
    problem: /leads out of its node_modules or to no package in it/,
  });
});

void t.test('a node the server left where it writes shows nothing above it', async (t) => {
  // On the server's PATH (its root, or `.` with its working directory there), a file named
  // node: taken for an installed Node, its "prefix" would be the directory above the root.
  const dir = ownedShortDir(t);
  const root = join(dir, 'root');
  mkdirSync(root);
  writeFileSync(join(root, 'node'), '#!/bin/sh\n', { mode: 0o755 });
  mkdirSync(join(dir, 'lib', 'node_modules'), { recursive: true });
  const ctx = { ...context(dir, join(dir, 'npm')), env: { PATH: root }, home: '/nonexistent-home' };
  const shown = await programPaths('node', [], ctx);
  t.ok(
    shown.includes(join(dir, 'lib', 'node_modules')) && !shown.includes(dir),
    "taken for a Node, its prefix's modules are shown, not the prefix",
  );
  t.same(
    await programPaths('node', [], { ...ctx, serverOwn: [root] }),
    [join(root, 'node')],
    'left where the server writes: only the file itself',
  );
  // A command that is a directory (a link the server made) is nothing to run, nor to show.
  mkdirSync(join(dir, 'secret'));
  symlinkSync(join(dir, 'secret'), join(dir, 'bin-node'));
  t.same(await programPaths(join(dir, 'bin-node'), [], ctx), [], 'a directory is not shown');
});

void t.test('a command the server left where it writes chooses nothing shown', async (t) => {
  // Its `#!` line, or a link named node, could otherwise name any project or Node install of the
  // user's, to be shown read-only to the server.
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  const project = join(dir, 'secretproj');
  mkdirSync(join(project, 'scripts'), { recursive: true });
  mkdirSync(w);
  writeFileSync(join(project, 'package.json'), '{}');
  writeFileSync(join(project, 'scripts/tool.sh'), '#!/bin/sh\n', { mode: 0o755 });
  writeFileSync(join(w, 'server.sh'), `#!${project}/scripts/tool.sh\n`, { mode: 0o755 });
  mkdirSync(join(dir, 'nv/bin'), { recursive: true });
  writeFileSync(join(dir, 'nv/bin/node'), '#!/bin/sh\n', { mode: 0o755 });
  symlinkSync(join(dir, 'nv/bin/node'), join(w, 'node2'));
  const ctx = { ...context(dir, join(dir, 'npm')), home: '/nonexistent-home' };
  t.ok(
    (await programPaths(join(w, 'server.sh'), [], ctx)).includes(project),
    'elsewhere, its #! line is followed',
  );
  t.same(
    await programPaths(join(w, 'server.sh'), [], { ...ctx, serverOwn: [w] }),
    [join(w, 'server.sh')],
    'where the server writes, not',
  );
  t.same(
    await programPaths(join(w, 'node2'), [], { ...ctx, serverOwn: [w] }),
    [join(dir, 'nv/bin/node')],
    'a link there named node: no prefix of where it leads',
  );
});

void t.test("a writable path anywhere in npx's cache refuses its copies", async (t) => {
  // npm's store of downloads: the next `npx -y` outside the sandbox installs from it.
  const dir = ownedShortDir(t);
  const cache = join(dir, 'npm');
  cachedServer(cache, 'aaa', '1.0.0');
  mkdirSync(join(cache, '_cacache'));
  t.match(await resolveNpx(launch(['@x/srv']), context(dir, cache), [join(cache, '_cacache')]), {
    problem: /lies where the server may write \(.*_cacache:/,
  });
});

void t.test('sandboxed under bwrap: a planted higher version in a cache in the root', async (t) => {
  const dir = ownedShortDir(t);
  const cache = join(dir, 'root/npm');
  cachedServer(cache, 'aaa', '1.0.0');
  const planted = cachedServer(cache, 'zzz', '99.0.0');
  const d = await startDaemon(t, `version: 1\nservers:\n  s:\n    roots: [{path: ${dir}/root}]\n`, {
    dir,
  });
  const refused = proxiedTransport({
    server: 's',
    socket: d.socket,
    proxyArgs: ['--sandbox'],
    command: ['npx', '-y', '@x/srv', '{roots}'],
    env: { npm_config_cache: cache },
  });
  const host = new Client({ name: 'test-host', version: '0' }, { capabilities: {} });
  await t.rejects(host.connect(refused.transport), 'the server is not started');
  t.match(refused.stderr(), `its copy in npx's cache, ${planted}, lies where the server may write`);
  await host.close();
});
