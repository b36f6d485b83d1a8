/**
 * `npx SPEC` under --sandbox: the proxy finds what npx would run, outside, and runs it sandboxed
 * with no npx (proxy/npx.ts). Two ways it once named the wrong thing: a version part (`@latest`,
 * `@^1`) was compared with the cached versions as text, so nothing but an exact version was ever
 * found and the refusal advised the very command that had cached it; and a command name
 * (`npx mcp-server-filesystem`, a bin in the project's node_modules/.bin) was taken for a package
 * name, and the advice was to install the npm package of that name, someone else's code. Real
 * files laid out as npm lays them out, in temporary directories; the last tests run real bwrap.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t from 'tap';
import { resolveNpx } from '../../proxy/npx.js';
import { parseRange, parseVersion } from '../../proxy/npx-version.js';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, proxiedTransport, startProxied } from '../helpers/proxied-server.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { fixtureServer } from '../helpers/repo.js';

const launch = (args: string[]) => ({ command: 'npx', args, env: [] });

/** A package as npm installs it, its bin a copy of the hostile fixture server that can run alone. */
function installServer(modules: string, name: string, version: string, bin: string): string {
  const dir = join(modules, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name, version, bin: { [bin]: 'cli.mjs' } }),
  );
  writeFileSync(
    join(dir, 'cli.mjs'),
    `#!/usr/bin/env node\n${readFileSync(HOSTILE_SERVER, 'utf8')}`,
  );
  writeFileSync(join(dir, 'parent-watch.mjs'), readFileSync(fixtureServer('parent-watch.mjs')));
  chmodSync(join(dir, 'cli.mjs'), 0o755);
  return join(dir, 'cli.mjs');
}

/** npx's cache with @x/srv in three versions, each in an install of its own (as `npx -p`). */
function fakeCache(dir: string): { cache: string; bin: (hash: string) => string } {
  const cache = join(dir, 'npm');
  for (const [hash, version] of [
    ['aaa', '1.0.0'],
    ['bbb', '1.10.0'],
    ['ccc', '2.0.0-rc.1'],
  ] as const) {
    installServer(join(cache, '_npx', hash, 'node_modules'), '@x/srv', version, 'srv');
  }
  return { cache, bin: (hash) => join(cache, '_npx', hash, 'node_modules/@x/srv/cli.mjs') };
}

void t.test('versions and ranges as npm reads them', (t) => {
  const v = (s: string) => parseVersion(s)!;
  const inRange = (range: string, version: string) => parseRange(range)!(v(version));
  t.ok(inRange('^1', '1.10.0'));
  t.notOk(inRange('^1', '2.0.0'));
  t.ok(inRange('^0.2.3', '0.2.9'));
  t.notOk(inRange('^0.2.3', '0.3.0'));
  t.ok(inRange('~1.2', '1.2.7'));
  t.notOk(inRange('~1.2', '1.3.0'));
  t.ok(inRange('>=1.0.0 <1.5', '1.4.99'));
  t.notOk(inRange('>=1.0.0 <1.5', '1.5.0'));
  t.ok(inRange('1.x || >=3', '3.1.0'));
  t.ok(inRange('1.0.0 - 1.2', '1.2.5'));
  t.notOk(inRange('^2', '2.0.0-rc.1'), 'a prerelease only where a comparator names one');
  t.ok(inRange('^2.0.0-rc.0', '2.0.0-rc.1'));
  t.equal(parseRange('latest'), undefined);
  t.end();
});

/** The fake cache in a directory of its own, and a context whose npm finds it. */
function cachedWorld(t: Parameters<typeof ownedShortDir>[0]) {
  const dir = ownedShortDir(t);
  const { cache, bin } = fakeCache(dir);
  const ctx = {
    env: { PATH: '/usr/bin', npm_config_cache: cache },
    cwd: dir,
    home: join(dir, 'h'),
  };
  return { dir, cache, bin, ctx };
}

void t.test('a version or tag in the spec picks the cached copy it allows', async (t) => {
  const { bin, ctx } = cachedWorld(t);

  // `latest`: the newest cached release; the log is told which version that was.
  const latest = await resolveNpx(launch(['-y', '@x/srv@latest', 'a']), ctx);
  t.match(latest, {
    launch: { args: [bin('bbb'), 'a'] },
    note: /@x\/srv 1\.10\.0, the newest release in npx's cache/,
  });
  t.match(await resolveNpx(launch(['@x/srv@1.0.0']), ctx), { launch: { args: [bin('aaa')] } });
  t.match(await resolveNpx(launch(['@x/srv@^1']), ctx), { launch: { args: [bin('bbb')] } });
  t.match(await resolveNpx(launch(['@x/srv@~1.0']), ctx), { launch: { args: [bin('aaa')] } });
  t.match(await resolveNpx(launch(['@x/srv@2.0.0-rc.1']), ctx), { launch: { args: [bin('ccc')] } });

  // Not cached: the advice is a command that caches a copy the same spec then finds.
  t.match(await resolveNpx(launch(['@x/srv@1.5.0']), ctx), {
    problem:
      /not in npx's cache .*holds 1\.0\.0, 1\.10\.0, 2\.0\.0-rc\.1.*\(cd ~ && npx -y -p @x\/srv@1\.5\.0 true\)/,
  });
  t.match(await resolveNpx(launch(['@x/srv@>=3 <4']), ctx), {
    problem: /\(cd ~ && npx -y -p '@x\/srv@>=3 <4' true\)/,
  });
  // Another tag: which version it names is the registry's to say; caching it would not help.
  const next = await resolveNpx(launch(['@x/srv@next']), ctx);
  t.match(next, {
    problem: /tag "next".*cannot ask.*Name a version.*npm view @x\/srv@next version/,
  });
  t.notMatch(next, { problem: /-p @x\/srv@next/ });
});

void t.test('npx -p PACKAGE COMMAND runs that command of the cached package', async (t) => {
  const { dir, bin, ctx } = cachedWorld(t);
  // The forms the refusals themselves advise (`npx -y -p SPEC ...`), each option spelling.
  for (const args of [
    ['-y', '-p', '@x/srv@^1', 'srv', 'a'],
    ['--package', '@x/srv@^1', '-y', 'srv', 'a'],
    ['--package=@x/srv@^1', 'srv', 'a'],
  ]) {
    t.match(
      await resolveNpx(launch(args), ctx),
      { launch: { args: [bin('bbb'), 'a'] } },
      args.join(' '),
    );
  }
  t.match(await resolveNpx(launch(['-p', '@x/srv@1.0.0', 'srv']), ctx), {
    launch: { args: [bin('aaa')] },
  });
  // A command the package does not have is named as such, with the ones it has.
  t.match(await resolveNpx(launch(['-p', '@x/srv@1.0.0', 'true']), ctx), {
    problem: /@x\/srv@1\.0\.0 has no command "true"; its commands are srv/,
  });
  t.match(await resolveNpx(launch(['-p', '@x/srv@1.5.0', 'srv']), ctx), {
    problem: /@x\/srv@1\.5\.0 is not in npx's cache/,
  });
  // Not understood: said, with the forms that are.
  for (const [args, found] of [
    [['-p', '@x/srv', '-p', 'other', 'srv'], /found 2 packages: name one/],
    [['-p', '--yes', 'srv'], /found "--yes" after -p/],
    [['-p', '@x/srv'], /found ""/],
    [['-p', '@x/srv', '--call', 'x'], /found "--call"/],
  ] as const) {
    t.match(await resolveNpx(launch([...args]), ctx), {
      problem: new RegExp(`-p PACKAGE\\[@VERSION\\] COMMAND ARGS.*${found.source}`),
    });
  }
  // A project command of the same name: which one npx runs depends on the project's
  // dependencies, so the proxy says so rather than guess.
  const project = join(dir, 'project');
  installServer(join(project, 'node_modules'), '@x/srv', '1.0.0', 'srv');
  mkdirSync(join(project, 'node_modules/.bin'));
  symlinkSync('../@x/srv/cli.mjs', join(project, 'node_modules/.bin/srv'));
  t.match(await resolveNpx(launch(['-p', '@x/srv', 'srv']), { ...ctx, cwd: project }), {
    problem: /npx -p @x\/srv srv: .*node_modules\/\.bin\/srv is also a command of that name/,
  });
});

void t.test('a FIFO where npx keeps a file does not hold the start', async (t) => {
  // Opened for reading, a FIFO blocks until written, in a thread of libuv's pool that not even
  // process.exit frees: the proxy would never start the server, nor refuse it.
  const { dir, cache, bin, ctx } = cachedWorld(t);
  const pkg = join(cache, '_npx', 'fff', 'node_modules', '@x/srv');
  mkdirSync(pkg, { recursive: true });
  execFileSync('mkfifo', [join(pkg, 'package.json')]);
  t.match(
    await resolveNpx(launch(['-p', '@x/srv@^1', 'srv']), ctx),
    { launch: { args: [bin('bbb')] } },
    "the cache's other copies",
  );
  mkdirSync(join(dir, 'h'));
  execFileSync('mkfifo', [join(dir, 'h/.npmrc')]);
  t.match(
    await resolveNpx(launch(['@x/srv']), { ...ctx, env: { PATH: '/usr/bin' } }),
    { problem: /not in npx's cache \(.*\/h\/\.npm\/_npx\)/ },
    'a FIFO ~/.npmrc: the default cache',
  );
});

void t.test("npx's cache is found where npm would look", async (t) => {
  // npm reads npm_config_* in any case, and `cache=` from the user's npmrc: looking only at
  // `npm_config_cache` and ~/.npm, the proxy told a user with either that nothing was cached.
  const dir = ownedShortDir(t);
  const { cache, bin } = fakeCache(dir);
  const home = join(dir, 'h');
  mkdirSync(home);
  const at = async (env: Record<string, string>) =>
    resolveNpx(launch(['@x/srv@1.0.0']), { env: { PATH: '/usr/bin', ...env }, cwd: dir, home });
  t.match(await at({ NPM_CONFIG_CACHE: cache }), { launch: { args: [bin('aaa')] } }, 'upper case');
  t.match(
    await at({ npm_config_cache: join(dir, 'elsewhere'), NPM_CONFIG_CACHE: cache }),
    { launch: { args: [bin('aaa')] } },
    'the last one set wins, as in npm',
  );
  writeFileSync(join(home, '.npmrc'), `registry=https://example.invalid/\ncache = "${cache}"\n`);
  t.match(await at({}), { launch: { args: [bin('aaa')] } }, "the user's npmrc");
  writeFileSync(join(home, '.npmrc'), 'cache=${NPMDIR}/npm\n');
  t.match(await at({ NPMDIR: dir }), { launch: { args: [bin('aaa')] } }, 'a variable in it');
  writeFileSync(join(dir, 'other.npmrc'), 'cache=~/../npm\n');
  t.match(
    await at({ NPM_CONFIG_USERCONFIG: join(dir, 'other.npmrc') }),
    { launch: { args: [bin('aaa')] } },
    'npm_config_userconfig, with ~',
  );
  t.match(
    await at({ npm_config_cache: join(dir, 'empty') }),
    { problem: new RegExp(`not in npx's cache \\(${dir}/empty/_npx\\)`) },
    'the environment before the npmrc',
  );
});

void t.test("npx NAME runs the project's command NAME, as npx does", async (t) => {
  const dir = ownedShortDir(t);
  const project = join(dir, 'project');
  // The project's package and its command, whose name is not the package's.
  const file = installServer(
    join(project, 'node_modules'),
    '@x/thing',
    '1.0.0',
    'mcp-server-thing',
  );
  mkdirSync(join(project, 'node_modules/.bin'));
  symlinkSync('../@x/thing/cli.mjs', join(project, 'node_modules/.bin/mcp-server-thing'));
  mkdirSync(join(project, 'sub'));
  // A stranger's package of the command's name, in npx's cache: npx would not run it here.
  const cache = join(dir, 'npm');
  installServer(
    join(cache, '_npx/s/node_modules'),
    'mcp-server-thing',
    '9.0.0',
    'mcp-server-thing',
  );
  const ctx = (cwd: string) => ({
    env: { PATH: '/usr/bin', npm_config_cache: join(dir, 'empty') },
    cwd,
    home: join(dir, 'h'),
  });
  t.match(await resolveNpx(launch(['mcp-server-thing', 'x']), ctx(join(project, 'sub'))), {
    launch: { command: file, args: ['x'] },
    note: /project's command .*node_modules\/\.bin\/mcp-server-thing/,
  });
  t.match(
    await resolveNpx(launch(['-y', 'mcp-server-thing']), {
      ...ctx(project),
      env: { PATH: '/usr/bin', npm_config_cache: cache },
    }),
    { launch: { command: file } },
    'before a package of that name in the cache',
  );

  // A command that cannot run: said so, and no advice to install the package of its name.
  chmodSync(file, 0o644);
  const broken = await resolveNpx(launch(['mcp-server-thing']), ctx(project));
  t.match(broken, {
    problem: /runs the command .*cannot be executed.*names that command, not a package/,
  });
  t.notMatch(broken, { problem: /npx -y -p|npm install -g/ });
  chmodSync(file, 0o755);

  // A command that leads out of its node_modules (a link a server could have made in its root)
  // is not followed to what it names; nor is a node_modules that is a link.
  const planted = join(dir, 'planted');
  installServer(join(planted, 'node_modules'), 'other', '1.0.0', 'other');
  symlinkSync(join(planted, 'node_modules/other/cli.mjs'), join(project, 'node_modules/.bin/out'));
  mkdirSync(join(dir, 'linked'));
  symlinkSync(join(project, 'node_modules'), join(dir, 'linked/node_modules'));
  for (const [name, cwd] of [
    ['out', project],
    ['mcp-server-thing', join(dir, 'linked')],
  ] as const) {
    const led = await resolveNpx(launch([name]), ctx(cwd));
    t.match(led, { problem: /leads out of its node_modules.*names that command, not a package/ });
    t.notMatch(led, { problem: /npx -y -p|npm install -g/ });
  }

  // A command in a place the server may write (its root, a sandbox.write path, or above: the
  // .bin directory or the file it leads to) may be its own work from an earlier session: its
  // `#!` line would choose what the sandbox shows. Refused, whichever of the two lies there.
  for (const own of [
    project,
    join(project, 'node_modules/.bin'),
    join(project, 'node_modules/@x'),
  ]) {
    const mine = await resolveNpx(launch(['mcp-server-thing']), ctx(project), [own]);
    t.match(mine, {
      problem: new RegExp(
        `would run the command .* which lies in ${own}, where the server may write`,
      ),
    });
  }
  t.match(
    await resolveNpx(launch(['mcp-server-thing']), ctx(project), [join(dir, 'elsewhere')]),
    { launch: { command: file } },
    'a root elsewhere changes nothing',
  );

  // A name that would lead out of npx's cache is no package name.
  for (const spec of ['@x/../../w', '..', '@x/..', 'a/b/c', '@../x']) {
    t.match(
      await resolveNpx(launch([spec]), ctx(dir)),
      { problem: /does not name an npm package/ },
      spec,
    );
  }

  // Elsewhere there is no such command: the refusal says where npx looked, and that the npm
  // package of that name may not be the command's.
  t.match(await resolveNpx(launch(['mcp-server-thing']), ctx(dir)), {
    problem:
      /not a command in node_modules\/\.bin of .* or a directory above it.*--cwd.*often not its package's/,
  });
});

void t.test('sandboxed under bwrap: the local command and a cached @latest', async (t) => {
  const dir = ownedShortDir(t);
  const project = join(dir, 'project');
  installServer(join(project, 'node_modules'), '@x/thing', '1.0.0', 'mcp-server-thing');
  mkdirSync(join(project, 'node_modules/.bin'));
  symlinkSync('../@x/thing/cli.mjs', join(project, 'node_modules/.bin/mcp-server-thing'));
  const { cache } = fakeCache(dir);
  mkdirSync(join(dir, 'root'));
  const d = await startDaemon(t, `version: 1\nservers:\n  s:\n    roots: [{path: ${dir}/root}]\n`, {
    dir,
  });
  const argv = async (s: { call: (n: string) => Promise<{ text: string }> }) =>
    (JSON.parse((await s.call('launch')).text) as { argv: string[] }).argv;

  const local = await startProxied(t, {
    server: 's',
    socket: d.socket,
    proxyArgs: ['--sandbox', '--cwd', project],
    command: ['npx', 'mcp-server-thing', '{roots}'],
    env: { npm_config_cache: join(dir, 'empty') },
  });
  t.same(await argv(local), [`${dir}/root`], 'the command ran in its sandbox');
  t.match(local.stderr(), /in its sandbox/);
  t.match(local.stderr(), /running the project's command/);

  // The server's root as its working directory: a command planted there (with a `#!` line
  // naming a script elsewhere, whose package the sandbox would then show) is not run.
  const planted = join(dir, 'root/node_modules/.bin');
  mkdirSync(planted, { recursive: true });
  writeFileSync(join(planted, 'mcp-server-thing'), '#!/bin/sh\necho planted\n', { mode: 0o755 });
  const refused = proxiedTransport({
    server: 's',
    socket: d.socket,
    proxyArgs: ['--sandbox', '--cwd', join(dir, 'root')],
    command: ['npx', 'mcp-server-thing', '{roots}'],
    env: { npm_config_cache: join(dir, 'empty') },
  });
  const host = new Client({ name: 'test-host', version: '0' }, { capabilities: {} });
  await t.rejects(host.connect(refused.transport), 'the server is not started');
  t.match(refused.stderr(), /lies in .*\/root, where the server may write/);
  await host.close();

  const tagged = await startProxied(t, {
    server: 's',
    socket: d.socket,
    proxyArgs: ['--sandbox'],
    command: ['npx', '-y', '@x/srv@latest', '{roots}'],
    env: { npm_config_cache: cache },
  });
  t.same(await argv(tagged), [`${dir}/root`]);
  t.match(tagged.stderr(), /running @x\/srv 1\.10\.0, the newest release in npx's cache/);

  const named = await startProxied(t, {
    server: 's',
    socket: d.socket,
    proxyArgs: ['--sandbox'],
    command: ['npx', '-y', '-p', '@x/srv@^1', 'srv', '{roots}'],
    env: { npm_config_cache: cache },
  });
  t.same(await argv(named), [`${dir}/root`], 'npx -p ran in its sandbox');
  t.match(named.stderr(), /in its sandbox/);
});
