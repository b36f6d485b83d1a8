/**
 * rootsctl in-process without a daemon: usage errors, the offline commands with --config, and
 * the help (the commands against a running daemon are in rootsctl-online.test.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { timeLeft } from '../../cli/format.js';
import { rootsctl } from '../helpers/cli.js';
import { policyTree as tree } from '../helpers/cli-tree.js';
import { startDaemon } from '../helpers/daemon.js';

void t.test('usage errors exit 2', async (t) => {
  t.match(await rootsctl([]), { code: 2, err: /^Usage: rootsctl COMMAND/ });
  t.match(await rootsctl(['frobnicate']), {
    code: 2,
    err: 'rootsctl: unknown command "frobnicate"\nRun `rootsctl --help` for the commands.\n',
  });
  t.match(await rootsctl(['list']), {
    code: 2,
    err: /^rootsctl: list takes 1 argument, got 0: rootsctl list SERVER\n/,
  });
  t.match(await rootsctl(['stauts']), {
    code: 2,
    err: /unknown command "stauts" \(did you mean "status"\?\)/,
  });
  t.match(await rootsctl(['grant', 'fs', '/tmp', '--readonly']), {
    code: 2,
    err: 'rootsctl: unknown option --readonly (did you mean --read-only?)\n',
  });
  t.match(await rootsctl(['list', 'fs', '--write']), {
    code: 2,
    err: /--write does not apply to list/,
  });
  t.match(await rootsctl(['list', 'fs', '--bogus']), { code: 2, err: /unknown option --bogus\n/ });
  t.match(await rootsctl(['--help']), { code: 0, out: /^Usage: rootsctl/ });
});

void t.test('offline list, check and explain with --config', async (t) => {
  const { dir, home, real, config } = tree();
  const env = { HOME: home, XDG_STATE_HOME: join(dir, 'state') };
  const list = await rootsctl(['list', 'fs', '--config', config, '--json'], { env });
  t.equal(list.code, 0);
  t.same(JSON.parse(list.out), {
    roots: [
      {
        uri: pathToFileURL(join(real, 'home/docs')).href,
        name: 'Documents',
        _meta: { 'mcp-roots/readOnly': true },
      },
      {
        uri: pathToFileURL(join(real, 'home/proj')).href,
        name: 'proj',
        _meta: {
          'mcp-roots/readOnly': false,
          'mcp-roots/deny': [
            { uri: pathToFileURL(join(real, 'home/proj/secret')).href, access: 'all' },
          ],
        },
      },
    ],
    _meta: { 'mcp-roots/revision': 0, 'mcp-roots/instance': 'offline' },
  });
  const table = await rootsctl(['list', 'fs', '--config', config], { env });
  t.equal(
    table.out,
    [
      'PATH    ACCESS               EXPIRES  NAME',
      `${real === dir ? '~' : join(real, 'home')}/docs  read-only            -        Documents`,
      `${real === dir ? '~' : join(real, 'home')}/proj  read-write (1 deny)  -        proj`,
      '',
    ].join('\n'),
  );
  const ok = await rootsctl(['check', 'fs', 'proj/a.txt', '--config', config], { env, cwd: home });
  t.equal(ok.code, 0, 'a relative PATH is taken against the working directory');
  t.match(ok.out, /^allowed: read: .*\/home\/proj\/a\.txt is inside the root file:\/\//);
  const denied = await rootsctl(
    ['check', 'fs', join(home, 'proj/secret/k'), '--config', config, '--json'],
    { env },
  );
  t.equal(denied.code, 1);
  t.match(JSON.parse(denied.out), {
    allowed: false,
    access: 'read',
    reason: /denied by deny ~\/proj\/secret/,
  });
  t.equal(
    (await rootsctl(['check', 'fs', join(home, 'proj-evil/x'), '--config', config], { env })).code,
    1,
  );
  t.equal(
    (await rootsctl(['check', 'fs', join(home, 'docs/x'), '--write', '--config', config], { env }))
      .code,
    1,
  );
  const explain = await rootsctl(['explain', 'fs', '--config', config, '--json'], { env });
  t.equal(explain.code, 0);
  const parsed = JSON.parse(explain.out) as {
    rules: { kind: string; line: number; column: number }[];
  };
  t.same(
    parsed.rules.map((r) => [r.kind, r.line, r.column]),
    [
      ['root', 6, 9],
      ['root', 7, 9],
      ['deny', 2, 8],
    ],
  );
});

void t.test('validate', async (t) => {
  const { dir, home, config } = tree();
  const env = { HOME: home, XDG_STATE_HOME: join(dir, 'state') };
  const good = await rootsctl(['validate', config], { env });
  t.same(good, { code: 0, out: `${config}: valid (1 file, 0 warnings)\n`, err: '' });
  writeFileSync(
    join(dir, 'bad.yaml'),
    'version: 1\nservers:\n  fs:\n    roots:\n      - path: ~/x\n        readonly: true\n',
  );
  const bad = await rootsctl(['validate', join(dir, 'bad.yaml')], { env });
  t.equal(bad.code, 1);
  // Every problem at once: what the schema accepted is checked on (the missing root is warned of
  // now, not once the key is fixed).
  const missingX = `warning: ${dir}/bad.yaml:5:9: ~/x: ${home}/x does not exist (yet); it is watched and appears when created\n`;
  t.equal(
    bad.out,
    `error: ${dir}/bad.yaml:6:9: servers.fs.roots[0].readonly: unknown key (did you mean "readOnly"?)\n${missingX}${dir}/bad.yaml: 1 error\n`,
    'a file no daemon serves: no word about the daemon',
  );
  const main = await rootsctl(['validate'], {
    env: { ...env, MCP_ROOTS_CONFIG: join(dir, 'bad.yaml') },
  });
  t.same(main, {
    code: 1,
    out: `error: ${dir}/bad.yaml:6:9: servers.fs.roots[0].readonly: unknown key (did you mean "readOnly"?)\n${missingX}${dir}/bad.yaml: 1 error; a running mcp-rootsd keeps serving the last valid policy until it is fixed\n`,
    err: '',
  });
  // An unset variable and an expired root behind unknown keys: one run shows all four.
  writeFileSync(
    join(dir, 'rounds.yaml'),
    [
      'version: 1',
      'servers:',
      '  fs:',
      '    roots:',
      `      - path: ${dir}`,
      '        readonly: true',
      '      - path: $MCP_ROOTS_TEST_UNSET/x',
      `      - path: ${dir}`,
      '        expire: 2020-01-01T00:00:00Z',
      `      - path: ${dir}`,
      '        expires: 2020-01-01T00:00:00Z',
      '',
    ].join('\n'),
  );
  const rounds = await rootsctl(['validate', join(dir, 'rounds.yaml')], { env });
  t.equal(rounds.code, 1);
  t.match(
    rounds.out.split('\n').map((l) => l.replace(/^(\w+): .*?:(\d+:\d+): (\S+).*/, '$1 $2 $3')),
    [
      'error 6:9 servers.fs.roots[0].readonly:',
      'error 7:15 $MCP_ROOTS_TEST_UNSET:',
      'error 9:9 servers.fs.roots[2].expire:',
      /^warning 10:9 /,
    ],
  );
  t.match(rounds.out, /expired at 2020-01-01T00:00:00\.000Z/);
  t.match(rounds.out, /rounds\.yaml: 3 errors\n$/);
  const missing = await rootsctl(['validate'], {
    env: { ...env, XDG_CONFIG_HOME: join(dir, 'nope') },
  });
  t.equal(missing.code, 1);
  t.match(
    missing.err,
    /does not exist: the daemon would serve no roots. Create it with `rootsctl init`/,
  );
  writeFileSync(
    join(dir, 'inside.yaml'),
    `version: 1\nservers:\n  fs:\n    roots: [{path: ${dir}}]\n`,
  );
  const warn = await rootsctl(['validate', join(dir, 'inside.yaml')], { env });
  t.equal(warn.code, 0);
  t.match(
    warn.out,
    /warning: .*inside\.yaml:4:13: .* is writable and contains the policy file .*inside\.yaml/,
  );
  // A relative root that misses says where relative paths are read from.
  writeFileSync(
    join(dir, 'relative.yaml'),
    'version: 1\nservers:\n  fs:\n    roots: [{path: projects/app}, {path: /nowhere/x}, {path: "${HOME}/nowhere"}]\n',
  );
  const relative = await rootsctl(['validate', join(dir, 'relative.yaml')], { env });
  t.equal(relative.code, 0);
  t.match(
    relative.out,
    `projects/app: ${dir}/projects/app does not exist (yet); it is watched and appears when created (a relative path is read from the directory of the file that holds it; write ~/projects/app for one in your home)\n`,
  );
  t.notMatch(relative.out, /\/nowhere\/x: .*relative path/, 'no such word for an absolute path');
  t.notMatch(relative.out, /nowhere: .*relative path/, 'nor for one from a variable');
  // A typo'd glob is a missing directory of a strange name: the warning says why it is plain.
  writeFileSync(
    join(dir, 'typo.yaml'),
    "version: 1\nservers:\n  fs:\n    roots: [{path: '~/r/[a'}, {path: '~/r/{a,b'}, {path: ~/r/plain}]\n",
  );
  const typo = await rootsctl(['validate', join(dir, 'typo.yaml')], { env });
  t.equal(typo.code, 0);
  t.match(
    typo.out,
    `${home}/r/[a does not exist (yet); it is watched and appears when created; its "[" has no "]" after it in the same name, so it is a plain character, not a glob's choice of characters ("[...]")\n`,
  );
  t.match(
    typo.out,
    `${home}/r/{a,b does not exist (yet); it is watched and appears when created; its "{" opens no group closed by "}" and holding a ",", so it is a plain character, not a glob's alternatives ("{a,b}")\n`,
  );
  t.match(
    typo.out,
    `${home}/r/plain does not exist (yet); it is watched and appears when created\n`,
  );
});

void t.test(
  'validate counts policy files only (not the grants file) and sorts problems by file, line, column',
  async (t) => {
    const { dir, home, config } = tree();
    const env = { HOME: home, XDG_STATE_HOME: join(dir, 'state') };
    mkdirSync(join(dir, 'state/mcp-roots'), { recursive: true });
    writeFileSync(
      join(dir, 'state/mcp-roots/grants.yaml'),
      `version: 1\nservers:\n  fs:\n    roots:\n      - {path: ${home}/docs, expires: ${new Date(Date.now() + 86400_000).toISOString()}}\n`,
    );
    t.same(await rootsctl(['validate', config], { env }), {
      code: 0,
      out: `${config}: valid (1 file, 0 warnings)\n`,
      err: '',
    });
    // The main policy file is checked with its grants file, which still does not count as a file.
    const main = { ...env, MCP_ROOTS_CONFIG: config };
    t.same(await rootsctl(['validate'], { env: main }), {
      code: 0,
      out: `${config}: valid (1 file, 0 warnings)\n`,
      err: '',
    });
    writeFileSync(
      join(dir, 'state/mcp-roots/grants.yaml'),
      'version: 1\nservers:\n  fs:\n    roots:\n      - {path: ~/docs, expires: 2099-02-30T00:00:00Z}\n',
    );
    t.match(await rootsctl(['validate'], { env: main }), {
      code: 1,
      out: /grants\.yaml:5:.*"2099-02-30T00:00:00Z" is not an RFC 3339 date-time/,
    });
    t.same(
      await rootsctl(['validate', config], { env }),
      { code: 0, out: `${config}: valid (1 file, 0 warnings)\n`, err: '' },
      'a FILE other than the main policy is checked alone',
    );
    const bad = 'version: 1\nservers:\n  fs:\n    roots:\n      - {path: ~/docs, bogus: 1}\n';
    // Loaded y.yaml first (the order written), shown b.yaml first.
    writeFileSync(join(dir, 'y.yaml'), bad);
    writeFileSync(join(dir, 'b.yaml'), bad);
    writeFileSync(join(dir, 'z.yaml'), 'version: 1\ninclude: [y.yaml, b.yaml]\n');
    const message =
      'servers.fs.roots[0].bogus: unknown key; the keys allowed here are path, name, readOnly, expires or kind';
    t.same(await rootsctl(['validate', join(dir, 'z.yaml')], { env }), {
      code: 1,
      out: `error: ${dir}/b.yaml:5:24: ${message}\nerror: ${dir}/y.yaml:5:24: ${message}\n${dir}/z.yaml: 2 errors\n`,
      err: '',
    });
  },
);

void t.test('--config FILE with errors answers nothing and exits 1', async (t) => {
  const { dir, home } = tree();
  const env = { HOME: home, XDG_STATE_HOME: join(dir, 'state') };
  writeFileSync(join(dir, 'bad.yaml'), 'version: 1\nservers:\n  fs:\n    roots: [{path: 1}]\n');
  const errors = await rootsctl(['validate', join(dir, 'bad.yaml')], { env });
  const firstError = errors.out.split('\n')[0]!;
  t.match(firstError, /^error: .*bad\.yaml:4:/);
  for (const argv of [
    ['list', 'fs'],
    ['check', 'fs', '/x'],
    ['explain', 'fs'],
    ['list', 'fs', '--json'],
  ]) {
    t.same(
      await rootsctl([...argv, '--config', join(dir, 'bad.yaml')], { env }),
      {
        code: 1,
        out: '',
        err: `${firstError}\nrootsctl: ${dir}/bad.yaml has 1 error; \`rootsctl validate ${dir}/bad.yaml\` lists them\n`,
      },
      argv.join(' '),
    );
  }
  t.same(await rootsctl(['list', 'fs', '--config', join(dir, 'nope.yaml')], { env }), {
    code: 1,
    out: '',
    err: `rootsctl: ${dir}/nope.yaml does not exist; --config needs an existing policy file\n`,
  });
});

void t.test(
  "list names the policy's servers when no entry matches (a typo), and exits 1",
  async (t) => {
    const { dir, home, config } = tree();
    const env = { HOME: home, XDG_STATE_HOME: join(dir, 'state') };
    writeFileSync(
      join(dir, 'two.yaml'),
      'version: 1\nservers:\n  filesystem:\n    roots: [{path: ~/docs}]\n  notes:\n    roots: [{path: ~/missing}]\n',
    );
    const two = join(dir, 'two.yaml');
    t.same(await rootsctl(['list', 'nosuch', '--config', two], { env }), {
      code: 1,
      out: 'No entry of the policy names "nosuch" (deny by default). Servers in the policy: filesystem, notes.\n',
      err: '',
    });
    t.same(await rootsctl(['list', 'nots', '--config', two], { env }), {
      code: 1,
      out: 'No entry of the policy names "nots" (deny by default). Did you mean "notes"? Servers in the policy: filesystem, notes.\n',
      err: '',
    });
    t.same(
      await rootsctl(['list', 'notes', '--config', two], { env }),
      { code: 0, out: 'notes has no roots.\n', err: '' },
      'an entry that yields nothing is a plain empty list',
    );
    // An entry with no roots, or only denies, names the server: a plain empty list, not a typo.
    const three = join(dir, 'three.yaml');
    writeFileSync(
      three,
      'version: 1\nservers:\n  empty:\n    roots: []\n  denied:\n    deny: [~/secret]\n',
    );
    for (const server of ['empty', 'denied']) {
      t.same(
        await rootsctl(['list', server, '--config', three], { env }),
        { code: 0, out: `${server} has no roots.\n`, err: '' },
        `an entry for ${server} with no roots is named`,
      );
    }
    const json = await rootsctl(['list', 'nosuch', '--config', two, '--json'], { env });
    t.same(
      JSON.parse(json.out),
      { roots: [], _meta: { 'mcp-roots/revision': 0, 'mcp-roots/instance': 'offline' } },
      "--json keeps the protocol's shape",
    );
    t.equal(json.code, 1, '--json exits 1 too');
    t.match(json.err, /^rootsctl: No entry of the policy names "nosuch"/);

    const d = await startDaemon(t, undefined, { dir, configFile: config, home });
    const online = { HOME: home, MCP_ROOTS_SOCKET: d.socket };
    // A proxy started with a typo subscribes to it: the daemon's status then lists that name too.
    const proxy = await d.connect('proxy');
    await proxy.listRoots('fz', { subscribe: true });
    t.same(await rootsctl(['list', 'fz'], { env: online }), {
      code: 1,
      out: 'No entry of the policy names "fz" (deny by default). Did you mean "fs"? Servers in the policy: fs.\n',
      err: '',
    });
    t.same(await rootsctl(['list', 'fx'], { env: online }), {
      code: 1,
      out: 'No entry of the policy names "fx" (deny by default). Did you mean "fs"? Servers in the policy: fs.\n',
      err: '',
    });
    // explain too: its table of a name nothing covers is not the server's.
    const typo = await rootsctl(['explain', 'fx'], { env: online });
    t.equal(typo.code, 1, 'explain of a name no entry covers exits 1');
    t.match(typo.err, 'No entry of the policy names "fx" (deny by default). Did you mean "fs"?');
    t.equal((await rootsctl(['explain', 'fs'], { env: online })).code, 0, 'and 0 for one it names');
  },
);

void t.test('time left shows seconds under a minute', (t) => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  const at = (ms: number) => timeLeft(new Date(now + ms).toISOString(), now);
  t.equal(at(8_000), '8s');
  t.equal(at(7_200), '8s', 'rounded up');
  t.equal(at(59_000), '59s');
  t.equal(at(59_500), '1m');
  t.equal(at(90_000), '2m');
  t.equal(at(2 * 3600_000 + 5 * 60_000), '2h 5m');
  t.equal(at(3 * 86400_000 + 4 * 3600_000), '3d 4h');
  t.equal(at(0), 'expired');
  t.end();
});

void t.test('--help documents durations and every --dry-run', async (t) => {
  const help = (await rootsctl(['--help'])).out;
  t.match(help, '90s, 30m, 2h, 1d or 1h30m, at most 30d');
  t.match(help, 'read-write\n                                 unless --read-only');
  t.match(help, '\n  uninstall-service [--dry-run]  remove them\n');
  t.match(await rootsctl(['grant', 'fs', '/', '--for', '5x']), {
    code: 2,
    err: 'rootsctl: --for "5x" is not a duration; write e.g. 90s, 30m, 2h, 1d or 1h30m\n',
  });
});
