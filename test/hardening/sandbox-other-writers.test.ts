/**
 * A sandboxed server's program where another server may write. The sandbox showed the program
 * read-only to the server itself, but the file is what runs: a filesystem server with the
 * project writable could leave code in another server's program there, which that server then
 * ran with its own roots, network and grants. Now the daemon says what the policy lets other
 * servers write (`policy/explain` with `writers`), and the proxy refuses such a start, whoever
 * the writer is: a server's own block, a pattern or `'*'`, a grant, a `sandbox.write` path.
 * Real daemon, real proxy, real bwrap.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t, { type Test } from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, proxiedTransport, startProxied } from '../helpers/proxied-server.js';
import { waitFor } from '../helpers/poll.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { programOverlap } from '../../proxy/program-writers.js';
import { fixtureServer } from '../helpers/repo.js';

/** A project holding a server's program (a copy of the hostile fixture), and a notes directory. */
function layout(t: Test) {
  const dir = ownedShortDir(t);
  const tool = join(dir, 'proj/tool');
  mkdirSync(tool, { recursive: true });
  // A package: the sandbox shows its directory, which holds the module beside it.
  writeFileSync(join(tool, 'package.json'), '{"name": "tool", "type": "module"}');
  writeFileSync(join(tool, 'server.mjs'), readFileSync(HOSTILE_SERVER));
  writeFileSync(join(tool, 'parent-watch.mjs'), readFileSync(fixtureServer('parent-watch.mjs')));
  mkdirSync(join(dir, 'notes'));
  mkdirSync(join(dir, 'other'));
  return { dir, program: join(tool, 'server.mjs') };
}

/** `tool`'s block: read-only notes, sandboxed. */
const toolBlock = (dir: string) =>
  `  tool:\n    roots: [{path: ${dir}/notes, readOnly: true}]\n    sandbox: true\n`;

/** Start `tool` on its program; the error the host gets, or undefined once it started. */
async function tryStart(
  t: Test,
  socket: string,
  program: string | string[],
  proxyArgs: string[] = [],
) {
  const started = proxiedTransport({
    server: 'tool',
    socket,
    proxyArgs,
    command: typeof program === 'string' ? [process.execPath, program] : program,
  });
  const host = new Client({ name: 'test-host', version: '0' }, { capabilities: {} });
  t.teardown(() => host.close());
  try {
    await host.connect(started.transport);
    return undefined;
  } catch {
    return started.stderr();
  }
}

void t.test('another server writing the program stops its start', async (t) => {
  const { dir, program } = layout(t);
  const policy = (fsRoot: string) =>
    `version: 1\nservers:\n  fs:\n    roots: [${fsRoot}]\n${toolBlock(dir)}`;
  const d = await startDaemon(t, policy(`{path: ${dir}/proj}`), { dir });
  const c = await d.connect();

  const explained = await c.explain('tool', { writers: true });
  t.match(
    explained.writers,
    [{ path: `${dir}/proj`, by: 'fs', file: d.config, line: 3 }],
    'the daemon names what fs may write, and where the policy says so',
  );
  t.notOk((await c.explain('tool')).writers, 'only when asked');

  const refused = await tryStart(t, d.socket, program);
  t.ok(refused !== undefined, 'the server is not started');
  t.match(
    refused,
    new RegExp(
      `the server's program includes ${program}, and the policy's entry "fs" \\(${d.config}:3\\) lets another server write ${dir}/proj, which overlaps it`,
    ),
    'and the proxy says which server may write it, and how to fix it',
  );
  t.match(refused, /make that path read-only for "fs" \(readOnly: true\)/);

  // Read-only for fs: the same start goes ahead, sandboxed.
  d.writePolicy(policy(`{path: ${dir}/proj, readOnly: true}`));
  t.equal((await c.reload()).ok, true);
  const server = await startProxied(t, {
    server: 'tool',
    socket: d.socket,
    command: [process.execPath, program],
  });
  t.match(server.stderr(), /in its sandbox/, 'started once no other server may write it');

  // Writable for fs again while it runs: the running server is stopped, not kept.
  d.writePolicy(policy(`{path: ${dir}/proj}`));
  t.equal((await c.reload()).ok, true);
  await waitFor(
    () => /the server is not started: the server's program includes/.test(server.stderr()),
    20_000,
    'the running server stopped',
  );
});

void t.test('every kind of writer counts; the server itself does not', async (t) => {
  const { dir, program } = layout(t);
  const cases: [string, string, RegExp][] = [
    [
      'a pattern',
      `  'f*':\n    roots: [{path: ${dir}/proj}]\n`,
      /entry "f\*" .* lets another server write/,
    ],
    [
      "'*'",
      `  '*':\n    roots: [{path: ${dir}/proj/tool}]\n`,
      /entry "\*" .* lets every server write/,
    ],
    [
      'a sandbox.write path',
      `  fs:\n    roots: []\n    sandbox: {write: [${dir}/proj/tool/server.mjs]}\n`,
      /entry "fs"/,
    ],
    [
      'a writable path inside a directory the program is shown by',
      `  fs:\n    roots: [{path: ${dir}/proj/tool/sub}]\n`,
      /entry "fs"/,
    ],
  ];
  mkdirSync(join(dir, 'proj/tool/sub'));
  /** A daemon of its own, in a directory of its own, on this policy. */
  let n = 0;
  const daemon = (servers: string) => {
    const own = join(dir, `d${++n}`);
    mkdirSync(own);
    return startDaemon(t, `version: 1\nservers:\n${servers}`, { dir: own });
  };
  for (const [what, block, said] of cases) {
    const d = await daemon(`${block}${toolBlock(dir)}`);
    const refused = await tryStart(t, d.socket, program);
    t.match(refused, said, `${what}: refused`);
    await d.close();
  }

  // A grant to another server, with nothing in the policy file.
  const d = await daemon(toolBlock(dir));
  const c = await d.connect();
  await c.grant('fs', join(dir, 'proj'), { seconds: 600 });
  t.match(await tryStart(t, d.socket, program), /entry "fs" \(.*grants\.yaml:\d+\)/, 'a grant');
  // Read-only, it writes nothing.
  await c.revoke('fs', join(dir, 'proj'));
  await c.grant('fs', join(dir, 'proj'), { seconds: 600, readOnly: true });
  t.equal(await tryStart(t, d.socket, program), undefined, 'a read-only grant: started');

  // The server's own writable root holding its program: it can change only its own code.
  await d.close();
  const own = await daemon(`  tool:\n    roots: [{path: ${dir}/proj}]\n    sandbox: true\n`);
  t.equal(await tryStart(t, own.socket, program), undefined, 'its own root: started');
});

void t.test('--sandbox on the command line asks for the writers too', async (t) => {
  const { dir, program } = layout(t);
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  fs:\n    roots: [{path: ${dir}/proj}]\n  tool:\n    roots: [{path: ${dir}/notes}]\n`,
    { dir },
  );
  t.match(await tryStart(t, d.socket, program, ['--sandbox']), /entry "fs"/, 'refused');
  t.equal(await tryStart(t, d.socket, program), undefined, 'unsandboxed, nothing is checked');
});

void t.test('the program named through a link where another server writes', async (t) => {
  // The start runs the program by the name the command line gives: a link on the way, in a
  // directory another server writes, could be re-pointed to its own code after the check.
  const { dir } = layout(t);
  mkdirSync(join(dir, 'fsw'));
  symlinkSync(join(dir, 'proj/tool'), join(dir, 'fsw/link'));
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  fs:\n    roots: [{path: ${dir}/fsw}]\n${toolBlock(dir)}`,
    { dir },
  );
  t.match(
    await tryStart(t, d.socket, join(dir, 'fsw/link/server.mjs')),
    `the server's program includes ${dir}/fsw/link/server.mjs, and the policy's entry "fs"`,
    'refused, naming the path as given',
  );
  t.equal(
    await tryStart(t, d.socket, join(dir, 'proj/tool/server.mjs')),
    undefined,
    'by its own path it starts',
  );
});

void t.test('a program another server could write once is not started again', async (t) => {
  // A grant to another server while the session runs stops the server; once revoked, the code
  // may have been changed meanwhile: not restarted in this session, started in a new one.
  const { dir, program } = layout(t);
  const d = await startDaemon(t, `version: 1\nservers:\n${toolBlock(dir)}`, { dir });
  const c = await d.connect();
  const server = await startProxied(t, {
    server: 'tool',
    socket: d.socket,
    command: [process.execPath, program],
  });
  await c.grant('fs', join(dir, 'proj'), { seconds: 600 });
  await waitFor(
    () => /the server is not started: the server's program includes/.test(server.stderr()),
    20_000,
    'stopped by the grant',
  );
  await c.revoke('fs', join(dir, 'proj'));
  await waitFor(
    () =>
      /the server is not started: another server could write this server's program earlier in this session \(the server's program includes .*"fs".*\), and may have changed it since/.test(
        server.stderr(),
      ),
    20_000,
    'not started again once revoked',
  );
  t.equal(await tryStart(t, d.socket, program), undefined, 'a new session starts it');
});

void t.test('whatever the command line names, links and linked packages count', async (t) => {
  // A third attacker pass: only the script the proxy took for the program was checked. An
  // option's `=value`, a `file:` URL, NODE_OPTIONS, an option whose value was taken for the
  // script, another interpreter's script, a package linked into node_modules, a link in the
  // middle of the path, and a package under a system directory all ran another server's code.
  const { dir, program } = layout(t);
  const shared = join(dir, 'shared');
  mkdirSync(join(shared, 'dep'), { recursive: true });
  for (const f of ['evil.mjs', 'evil.cjs', 'x.mjs']) writeFileSync(join(shared, f), '');
  writeFileSync(join(shared, 'evil.sh'), 'exit 0\n');
  writeFileSync(join(shared, 'dep/package.json'), '{"name": "dep"}');
  // A Node package under a system directory: Debian's Node keeps npm there (so does this
  // project's CI machine, whichever Node runs the tests); a Node of its own prefix may not.
  const npm = [
    '/usr/lib/node_modules/npm',
    join(dirname(dirname(process.execPath)), 'lib/node_modules/npm'),
  ].find((p) => existsSync(join(p, 'bin/npm-cli.js')));
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  fs:\n    roots: [{path: ${shared}}${npm === undefined ? '' : `, {path: ${npm}/lib}`}]\n` +
      `  tool:\n    roots: [{path: ${shared}, readOnly: true}]\n    sandbox: true\n`,
    { dir },
  );
  /** Refused, naming `named` (a path, or a pattern of one) as the part another server writes. */
  const refused = async (what: string, command: string[], named: string, proxyArgs?: string[]) =>
    t.match(
      await tryStart(t, d.socket, command, proxyArgs),
      new RegExp(`the server's program includes ${named}, and the policy's entry "fs"`),
      what,
    );
  const node = process.execPath;
  t.equal(await tryStart(t, d.socket, program), undefined, 'the clean program starts');
  await refused('--import=', [node, `--import=${shared}/evil.mjs`, program], `${shared}/evil.mjs`);
  await refused(
    'a file: URL',
    [node, '--import', `file://${shared}/evil.mjs`, program],
    `${shared}/evil.mjs`,
  );
  await refused(
    'after an unknown option',
    [node, '--title', 'foo', `${shared}/x.mjs`],
    `${shared}/x.mjs`,
  );
  await refused('NODE_OPTIONS', [node, program], `${shared}/evil.cjs`, [
    '--env',
    `NODE_OPTIONS=--require ${shared}/evil.cjs`,
  ]);
  await refused('a shell script', ['sh', `${shared}/evil.sh`], `${shared}/evil.sh`);
  // Fourth pass: a name Node completes (`.js`, `.cjs`, `/index.js` ...), and an env file's own
  // NODE_OPTIONS.
  await refused(
    '--require= without extension',
    [node, `--require=${shared}/evil`, program],
    `${shared}/evil\\.c?js`,
  );
  await refused('NODE_OPTIONS without extension', [node, program], `${shared}/evil\\.c?js`, [
    '--env',
    `NODE_OPTIONS=--require ${shared}/evil`,
  ]);
  writeFileSync(join(dir, 'proj/tool/envf'), `NODE_OPTIONS="--require ${shared}/evil.cjs"\n`);
  await refused(
    "an env file's NODE_OPTIONS",
    [node, `--env-file=${join(dir, 'proj/tool/envf')}`, program],
    `${shared}/evil\\.cjs`,
  );
  // One naming itself is read once: refused, not a proxy that never ends.
  const envf = join(dir, 'proj/tool/envf');
  writeFileSync(envf, `NODE_OPTIONS="--env-file=${envf} --require ${shared}/evil.cjs"\n`);
  await refused(
    'an env file naming itself',
    [node, `--env-file=${envf}`, program],
    `${shared}/evil\\.cjs`,
  );
  // Fifth pass: as Node reads them, quotes and comments and an env file's other variables; a
  // FIFO (a file Node reads, and one that held the start); a package from the working
  // directory's node_modules; an env file that may come later.
  await refused('NODE_OPTIONS quoted', [node, program], `${shared}/evil\\.cjs`, [
    '--env',
    `NODE_OPTIONS=--require "${shared}/evil.cjs"`,
  ]);
  writeFileSync(envf, `NODE_OPTIONS="--require ${shared}/evil.cjs" # a comment\n`);
  await refused(
    'an env file with a comment',
    [node, `--env-file=${envf}`, program],
    `${shared}/evil\\.cjs`,
  );
  writeFileSync(envf, `NODE_PATH=${shared}\n`);
  await refused("an env file's NODE_PATH", [node, `--env-file=${envf}`, program], shared);
  execFileSync('mkfifo', [join(shared, 'f.env'), join(shared, 'fifo.cjs')]);
  await refused(
    'a FIFO env file',
    [node, `--env-file=${shared}/f.env`, program],
    `${shared}/f\\.env`,
  );
  await refused('a FIFO script', [node, `${shared}/fifo.cjs`], `${shared}/fifo\\.cjs`);
  await refused(
    'a FIFO required',
    [node, `--require=${shared}/fifo.cjs`, program],
    `${shared}/fifo\\.cjs`,
  );
  // A Unix socket is a channel the server may use, as it may use its roots: no loader reads code
  // from one (open(2) refuses it), so naming one does not refuse the start.
  const channel = createServer();
  await new Promise<void>((resolve) => channel.listen(join(shared, 'ch.sock'), resolve));
  t.equal(
    await tryStart(t, d.socket, [node, program, `--keeper=${shared}/ch.sock`]),
    undefined,
    'a socket named starts',
  );
  await new Promise<void>((resolve) => channel.close(() => resolve()));
  mkdirSync(join(shared, 'node_modules/pkg'), { recursive: true });
  await refused(
    'a package from the working directory',
    [node, '--require', 'pkg', program],
    `${shared}/node_modules/pkg`,
    ['--cwd', shared],
  );
  await refused(
    'an env file not there yet',
    [node, `--env-file-if-exists=${shared}/later.env`, program],
    `${shared}/later\\.env`,
  );
  // Sixth pass: an env file's quoted value over lines, names inside a command or code string,
  // where Python looks before it is told, and loader variables the list missed.
  writeFileSync(envf, `NODE_OPTIONS="--title=a\nb --require ${shared}/evil.cjs"\n`);
  await refused(
    'an env file value over two lines',
    [node, `--env-file=${envf}`, program],
    `${shared}/evil\\.cjs`,
  );
  writeFileSync(envf, `A="never closed\nNODE_OPTIONS=--require ${shared}/evil.cjs\n`);
  await refused(
    'the line after a quote never closed',
    [node, `--env-file=${envf}`, program],
    `${shared}/evil\\.cjs`,
  );
  const evil = `${shared}/evil\\.cjs`;
  await refused('sh -c', ['sh', '-c', `exec ${node} ${shared}/evil.cjs`], evil);
  await refused('env -S', ['env', '-S', `${node} ${shared}/evil.cjs`], evil);
  await refused('node -e', [node, '-e', `require("${shared}/evil.cjs")`], evil);
  const python = '/usr/bin/python3';
  mkdirSync(join(shared, 'json'));
  writeFileSync(join(shared, 'json/__init__.py'), 'raise SystemExit(7)\n');
  await refused('python -m, the working directory first', [python, '-m', 'json.tool'], shared, [
    '--cwd',
    shared,
  ]);
  await refused('python -Ec, options together', [python, '-Ec', 'pass'], shared, ['--cwd', shared]);
  t.notMatch(
    (await tryStart(t, d.socket, [python, '-I', '-c', 'pass'], ['--cwd', shared])) ?? '',
    /the server's program includes/,
    'python -I does not look there',
  );
  await refused("HOME's user site-packages", [python, '-c', 'pass'], `${shared}/h/\\.local/lib`, [
    '--env',
    `HOME=${shared}/h`,
  ]);
  await refused('PYTHONUSERBASE', [python, '-c', 'pass'], `${shared}/ub`, [
    '--env',
    `PYTHONUSERBASE=${shared}/ub`,
  ]);
  await refused('PERLLIB', ['/usr/bin/perl', '-e', '1'], shared, ['--env', `PERLLIB=${shared}`]);
  // Seventh pass: what a wrapper's words set, a Python behind a wrapper, a data: URL's import.
  await refused(
    'env NODE_OPTIONS=',
    ['env', `NODE_OPTIONS=--require=${shared}/evil.cjs`, node, program],
    evil,
  );
  await refused(
    'env BASH_ENV=',
    ['env', `BASH_ENV=${shared}/evil.sh`, 'bash', '-c', `exec ${node} ${program}`],
    `${shared}/evil\\.sh`,
  );
  await refused('env PYTHONPATH=', ['env', `PYTHONPATH=${shared}`, python, '-c', 'pass'], shared);
  await refused('env python -m', ['env', python, '-m', 'json.tool'], shared, ['--cwd', shared]);
  await refused('nice python -m', ['nice', python, '-m', 'json.tool'], shared, ['--cwd', shared]);
  await refused('env -C python -m', ['env', '-C', shared, python, '-m', 'json.tool'], shared);
  await refused(
    'a data: URL importing a file',
    [node, `--import=data:text/javascript,import%22file://${shared}/evil.mjs%22;`, program],
    `${shared}/evil\\.mjs`,
  );
  await refused(
    'a base64 data: URL',
    [
      node,
      `--import=data:text/javascript;base64,${Buffer.from(`import "file://${shared}/evil.mjs"`).toString('base64')}`,
      program,
    ],
    `${shared}/evil\\.mjs`,
  );
  await refused('NODE_PATH', [node, program], shared, ['--env', `NODE_PATH=${shared}`]);
  await refused('LD_PRELOAD', [node, program], `${shared}/evil.cjs`, [
    '--env',
    `LD_PRELOAD=${shared}/evil.cjs`,
  ]);

  mkdirSync(join(dir, 'proj/tool/node_modules'));
  symlinkSync(join(shared, 'dep'), join(dir, 'proj/tool/node_modules/dep'));
  await refused('a linked package', [node, program], join(dir, 'proj/tool/node_modules/dep'));
  rmSync(join(dir, 'proj/tool/node_modules/dep'));

  // x/L -> shared/L2 -> proj: the link in the middle lies where fs writes.
  mkdirSync(join(dir, 'x'));
  symlinkSync(join(dir, 'proj'), join(shared, 'L2'));
  symlinkSync(join(shared, 'L2'), join(dir, 'x/L'));
  await refused(
    'a link in the middle',
    [node, join(dir, 'x/L/tool/server.mjs')],
    join(dir, 'x/L/tool/server.mjs'),
  );

  // The package, or the node_modules it lies in. Where no such package exists, the test below
  // checks the same rule on the paths alone.
  if (npm === undefined) t.comment('no npm under a system directory here: see the next test');
  else {
    await refused(
      'under a system directory',
      [node, join(npm, 'bin/npm-cli.js'), '--version'],
      `${dirname(npm)}(/npm)?`,
    );
  }
});

void t.test('a program path under a system directory is checked like any other', async (t) => {
  // The system directories are mounted whole, so the program's paths there were dropped before
  // the check: a package in /usr/lib/node_modules whose lib another server writes went ahead.
  const fs = { by: 'fs', file: '/p.yaml', line: 3 };
  const check = async (shown: string[], writer: string) =>
    (
      await programOverlap(
        {
          program: shown,
          programGiven: [],
          command: '/usr/bin/node',
          args: [],
          env: {},
          cwd: '/',
          visible: [],
        },
        [{ path: writer, ...fs }],
      )
    )?.reason;
  t.match(
    await check(
      ['/usr/bin/node', '/usr', '/usr/lib/node_modules/x'],
      '/usr/lib/node_modules/x/lib',
    ),
    /^the server's program includes \/usr\/lib\/node_modules\/x, and the policy's entry "fs" \(\/p\.yaml:3\)/,
    'a package there, holding a writer path',
  );
  t.equal(
    await check(['/usr/bin/node', '/usr'], '/usr/lib/node_modules/x/lib'),
    undefined,
    'a system directory itself is not code: a writer somewhere below it is not in the program',
  );
  t.match(await check(['/usr'], '/'), /program includes \/usr,/, 'but one above it is');
});
