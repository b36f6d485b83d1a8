/**
 * `rootsctl doctor` on this machine's real pieces (a running daemon, its socket directory, the
 * installed bubblewrap, /proc), with PATH hiding bwrap for the missing case. What the machine will
 * not do on demand (low inotify limits, user namespaces refused by a sysctl or AppArmor) is shown
 * through a copy of /proc/sys and a bwrap that fails as the real one does there.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t, { type Test } from 'tap';
import type { Check } from '../../cli/doctor/check.js';
import { doctor, type DoctorPlaces } from '../../cli/commands/doctor.js';
import type { Io } from '../../cli/io.js';
import { shortDir, startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/proxy.js';
import { failingBwrap } from '../helpers/failing-bwrap.js';

const BWRAP = spawnSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).stdout.trim();

/** A /proc/sys with the given values (path below /proc/sys → content). */
function procSys(values: Record<string, string>): string {
  const dir = shortDir();
  const all = {
    'fs/inotify/max_user_instances': '1024',
    'fs/inotify/max_user_watches': '524288',
    ...values,
  };
  for (const [key, value] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, key)), { recursive: true });
    writeFileSync(join(dir, key), `${value}\n`);
  }
  return dir;
}

async function runDoctor(
  env: Record<string, string | undefined>,
  argv: { config?: string; socket?: string; json?: boolean; 'state-dir'?: string },
  places: Partial<DoctorPlaces> = {},
  isTTY = false,
) {
  let out = '';
  const io: Io = { out: (s) => (out += s), err: () => undefined, env, cwd: '/', isTTY };
  const code = await doctor(
    io,
    [],
    { json: true, ...argv },
    {
      proc: '/proc',
      procSys: procSys({}),
      nodeVersion: '22.12.0',
      ...places,
    },
  );
  const checks = argv.json === false ? [] : (JSON.parse(out) as { checks: Check[] }).checks;
  const by = (name: string) => checks.find((c) => c.name === name)!;
  return { code, out, checks, by };
}

/** A home, a valid policy with a few directories, and a daemon serving it. */
async function world(t: Test, policyExtra = '') {
  const dir = shortDir();
  const home = join(dir, 'home');
  for (const d of ['p/a', 'p/b', 'p/c/d']) mkdirSync(join(home, d), { recursive: true });
  const config = join(dir, 'mcp-roots.yaml');
  writeFileSync(config, `version: 1\nservers:\n  fs:\n    roots: [{path: ~/p/**}]\n${policyExtra}`);
  const d = await startDaemon(t, undefined, { dir, home, configFile: config });
  const env = { HOME: home, PATH: process.env.PATH, MCP_ROOTS_CONFIG: config };
  return { dir, home, config, d, env };
}

void t.test('a machine with everything: each needed line OK, exit 0', async (t) => {
  const { d, env } = await world(t);
  const r = await runDoctor({ ...env, MCP_ROOTS_SOCKET: d.socket }, {});
  t.equal(r.code, 0, JSON.stringify(r.checks, null, 1));
  t.equal(r.by('node').verdict, 'ok');
  t.equal(r.by('socket directory').verdict, 'ok');
  t.match(r.by('daemon'), { verdict: 'ok', detail: /serves .*mcp-roots\.yaml, revision \d+/ });
  t.match(r.by('policy'), { verdict: 'ok', detail: /valid, 1 file/ });
  t.match(r.by('inotify watches'), {
    verdict: 'ok',
    detail: /already counted: mcp-rootsd is running/,
  });
  if (BWRAP !== '') t.match(r.by('sandbox (bubblewrap)'), { verdict: 'ok', detail: BWRAP });
  t.ok(['ok', 'warn'].includes(r.by('systemd user manager').verdict));
});

void t.test(
  'no daemon, an old Node, an unsafe socket directory: FAIL with fixes, exit 1',
  async (t) => {
    const { dir, env } = await world(t);
    const unsafe = join(dir, 'open');
    mkdirSync(unsafe);
    chmodSync(unsafe, 0o777);
    const r = await runDoctor(
      { ...env, MCP_ROOTS_SOCKET: join(unsafe, 'rootsd.sock') },
      {},
      { nodeVersion: '18.20.0' },
    );
    t.equal(r.code, 1);
    t.match(r.by('node'), { verdict: 'fail', detail: /older than 20\.19/ });
    t.match(r.by('socket directory'), { verdict: 'fail', fix: [`chmod 700 ${unsafe}`] });
    t.match(r.by('daemon'), {
      verdict: 'fail',
      fix: [/systemctl --user start mcp-rootsd\.socket/, /mcp-rootsd in a terminal/],
    });
    const other = await runDoctor(
      { ...env, MCP_ROOTS_SOCKET: join(dir, 'none', 'rootsd.sock') },
      {},
      { nodeVersion: '20.19.0' },
    );
    t.match(other.by('node'), { verdict: 'warn', detail: /end of life/ });
    t.match(other.by('socket directory'), { verdict: 'ok', detail: /does not exist yet/ });
    // The daemon a fix starts serves the policy doctor checked, on the socket it was given.
    const demo = join(dir, 'a demo', 'policy.yaml');
    mkdirSync(join(dir, 'a demo'));
    writeFileSync(demo, 'version: 1\nservers: {}\n');
    const given = await runDoctor(env, { config: demo, socket: join(dir, 'none', 'rootsd.sock') });
    const socketArg = `--socket ${join(dir, 'none', 'rootsd.sock')}`;
    // A socket of one's own: no systemd unit serves it, and what is not known is named.
    t.same(given.by('daemon').fix, [
      `run mcp-rootsd ${socketArg} --config '${demo}' in a terminal, with the --state-dir you run it with (the demo's: \`npm start\` in its repository)`,
    ]);
    const state = join(dir, 'state');
    const all = await runDoctor(env, {
      config: demo,
      'state-dir': state,
      socket: join(dir, 'none', 'rootsd.sock'),
    });
    t.same(all.by('daemon').fix, [
      `run mcp-rootsd ${socketArg} --config '${demo}' --state-dir ${state} in a terminal`,
    ]);
  },
);

void t.test('no --config: the policy checked is the one the daemon serves', async (t) => {
  // A daemon started on a file of its own (the demo's, say), the default file absent.
  const { dir, d, env, config } = await world(t);
  const own = { HOME: env.HOME, PATH: env.PATH, MCP_ROOTS_SOCKET: d.socket };
  const r = await runDoctor(own, {});
  t.equal(r.code, 0, JSON.stringify(r.checks, null, 1));
  t.match(r.by('policy'), {
    verdict: 'ok',
    detail: `${config} (the policy mcp-rootsd serves): valid, 1 file, 1 named server`,
  });
  // --config still names the file checked.
  const other = await runDoctor(own, { config: join(dir, 'none.yaml') });
  t.match(other.by('policy'), { verdict: 'fail', detail: /none\.yaml does not exist/ });
  // Its policy broken: the fix edits the file it serves.
  writeFileSync(config, 'version: 1\nservers: {fs: {roots: [{path: 7}]}}\n');
  let broken = r;
  await waitFor(
    async () => (broken = await runDoctor(own, {})).by('daemon').verdict === 'fail',
    10_000,
    'the daemon saw the error',
  );
  t.match(broken.by('daemon').fix?.[1], ` --config ${config} edit   (fix them;`);
  // The served file gone: its own fix, on that file.
  renameSync(config, `${config}.away`);
  const gone = await runDoctor(own, {});
  t.match(gone.by('policy'), {
    verdict: 'fail',
    detail: `${config} (the policy mcp-rootsd serves) does not exist: every server has no roots`,
  });
  const fix = gone.by('policy').fix?.[0] ?? '';
  t.ok(fix.endsWith(` --config ${config} init`), fix);
});

void t.test('a state directory replaced under the running daemon: FAIL, restart it', async (t) => {
  const { d, env } = await world(t);
  renameSync(d.stateDir, `${d.stateDir}.old`);
  mkdirSync(d.stateDir, { mode: 0o700 });
  const r = await runDoctor({ ...env, MCP_ROOTS_SOCKET: d.socket }, {});
  t.equal(r.code, 1);
  t.match(r.by('daemon'), {
    verdict: 'fail',
    detail:
      /runs, but the state directory .* is not the one the daemon started on \(it was replaced\)/,
    fix: [/^systemctl --user restart mcp-rootsd/, /^or stop pid \d+ and run /],
  });
});

void t.test('inotify limits the policy does not fit in', async (t) => {
  const { env } = await world(t);
  const r = await runDoctor(
    { ...env, MCP_ROOTS_SOCKET: '/nonexistent/rootsd.sock' },
    {},
    {
      procSys: procSys({
        'fs/inotify/max_user_watches': '3',
        'fs/inotify/max_user_instances': '1',
      }),
    },
  );
  t.equal(r.code, 1);
  t.match(r.by('inotify watches'), {
    verdict: 'fail',
    detail: /the policy needs \d+; that does not fit/,
    fix: [/^sudo sysctl -w fs\.inotify\.max_user_watches=\d+$/, /sysctl\.d/],
  });
  t.match(r.by('inotify instances'), { fix: [/fs\.inotify\.max_user_instances=/, /sysctl\.d/] });
});

void t.test(
  'bubblewrap missing: a warning, or FAIL when the policy sandboxes a server',
  async (t) => {
    const { dir, env, config } = await world(t);
    const empty = join(dir, 'empty-path');
    mkdirSync(empty);
    const hidden = { ...env, PATH: empty, MCP_ROOTS_SOCKET: '/nonexistent/rootsd.sock' };
    const r = await runDoctor(hidden, {});
    t.match(r.by('sandbox (bubblewrap)'), {
      verdict: 'warn',
      detail: /bwrap is not on PATH/,
      fix: [/apt-get install bubblewrap/],
    });
    writeFileSync(config, 'version: 1\nservers:\n  fs:\n    sandbox: true\n    roots: []\n');
    const needed = await runDoctor(hidden, {});
    t.equal(needed.by('sandbox (bubblewrap)').verdict, 'fail');
    t.equal(needed.code, 1);
  },
);

void t.test('user namespaces refused: the sysctl and AppArmor fixes', async (t) => {
  const { env } = await world(t);
  const refused = {
    ...env,
    PATH: failingBwrap('setting up uid map: Permission denied'),
    MCP_ROOTS_SOCKET: '/nonexistent/rootsd.sock',
  };
  const cases: [string, Record<string, string>, RegExp][] = [
    ['Debian', { 'kernel/unprivileged_userns_clone': '0' }, /kernel\.unprivileged_userns_clone=1/],
    ['no namespaces', { 'user/max_user_namespaces': '0' }, /user\.max_user_namespaces=15000/],
    [
      'Ubuntu AppArmor',
      { 'kernel/apparmor_restrict_unprivileged_userns': '1' },
      /apparmor\.d\/bwrap/,
    ],
  ];
  for (const [name, values, fix] of cases) {
    const r = await runDoctor(refused, {}, { procSys: procSys(values) });
    const line = r.by('sandbox (bubblewrap)');
    t.match(line.detail, /cannot make a sandbox here.*Permission denied/, name);
    t.match(line.fix!.join('\n'), fix, name);
  }
});

void t.test(
  'the system call filter refused: the kernel and container fixes, not the namespaces',
  async (t) => {
    const { env } = await world(t);
    // As a kernel without CONFIG_SECCOMP_FILTER makes bwrap fail (bubblewrap's own words).
    const path = failingBwrap(
      'Unable to set up system call filtering as requested: prctl(PR_SET_SECCOMP) reported EINVAL. Note that this requires CONFIG_SECCOMP and CONFIG_SECCOMP_FILTER in the kernel.',
    );
    const refused = { ...env, PATH: path, MCP_ROOTS_SOCKET: '/nonexistent/rootsd.sock' };
    // The namespaces' switches are off too: the fixes still answer the cause bwrap gave.
    const r = await runDoctor(
      refused,
      {},
      { procSys: procSys({ 'user/max_user_namespaces': '0' }) },
    );
    const line = r.by('sandbox (bubblewrap)');
    t.match(line.detail, /cannot make a sandbox here.*system call filtering/);
    const fixes = line.fix!.join('\n');
    t.match(fixes, /refuses seccomp filters/);
    t.match(fixes, /CONFIG_SECCOMP_FILTER=y/);
    t.notMatch(fixes, /max_user_namespaces/, 'not the user namespace fixes');
  },
);

void t.test(
  'the text: OK/WARN/FAIL lines, colour only on a terminal without NO_COLOR',
  async (t) => {
    const { d, env } = await world(t);
    const socketEnv = { ...env, MCP_ROOTS_SOCKET: d.socket };
    const plain = await runDoctor(socketEnv, { json: false }, {}, false);
    t.match(plain.out, /^OK {4}node: Node 22\.12\.0$/m);
    t.match(plain.out, /Everything mcp-roots needs is here\.\n$/);
    t.notMatch(plain.out, '\x1b[');
    const tty = await runDoctor(socketEnv, { json: false }, {}, true);
    t.match(tty.out, '\x1b[32mOK  \x1b[0m');
    const noColor = await runDoctor({ ...socketEnv, NO_COLOR: '1' }, { json: false }, {}, true);
    t.notMatch(noColor.out, '\x1b[');
  },
);
