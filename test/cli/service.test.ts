import { spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { Io } from '../../cli/io.js';
import { main } from '../../cli/run.js';
import {
  installService,
  renderUnits,
  systemdWord,
  uninstallService,
  type Systemctl,
} from '../../cli/commands/service.js';
import { REPO } from '../helpers/bin.js';

function capture(env: Io['env'], cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (s) => out.push(s), err: (s) => err.push(s), env, cwd, isTTY: false };
  return { io, out: () => out.join(''), err: () => err.join('') };
}

/** A fake `systemctl --user` that records its calls; `reachable` decides `show-environment`. */
function fakeSystemctl(reachable: boolean, fail: string[] = []) {
  const calls: string[] = [];
  const run: Systemctl = (args) => {
    calls.push(args.join(' '));
    if (args[0] === 'show-environment')
      return Promise.resolve({ code: reachable ? 0 : 1, output: '' });
    if (args[0] === 'is-active') return Promise.resolve({ code: 0, output: '' });
    if (fail.includes(args[0]!)) return Promise.resolve({ code: 1, output: 'Failed: boom\n' });
    return Promise.resolve({ code: 0, output: '' });
  };
  return { run, calls };
}

function setup(t: Test) {
  const dir = t.testdir({ home: {}, config: {} });
  const env = {
    HOME: join(dir, 'home'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    PATH: process.env.PATH,
  };
  return { dir, env, units: join(dir, 'config', 'systemd', 'user') };
}

/** The unit files from `install-service --dry-run`'s output, by path. */
function unitsFromDryRun(out: string): Map<string, string> {
  const files = new Map<string, string>();
  const re = /^Would write (\S+):\n\n([\s\S]*?)\n(?=Would write |Then run:)/gm;
  for (const m of out.matchAll(re)) files.set(m[1]!, m[2]!);
  return files;
}

/** `systemd-analyze --user verify` on unit files in `dir`: its exit code and everything it printed. */
function verify(dir: string, names: string[]) {
  // %t must fit in sun_path: tap's fixture paths are too long for a runtime directory.
  const runtime = mkdtempSync(join(tmpdir(), 'mr-'));
  const r = spawnSync('systemd-analyze', ['--user', 'verify', ...names.map((n) => join(dir, n))], {
    env: { ...process.env, XDG_RUNTIME_DIR: runtime, SYSTEMD_LOG_COLOR: '0' },
    encoding: 'utf8',
  });
  rmSync(runtime, { recursive: true, force: true });
  if (r.error) throw new Error(`systemd-analyze cannot run (${r.error.message}); install systemd`);
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

void t.test(
  'install-service --dry-run prints both units and the commands, and writes nothing',
  async (t) => {
    const { dir, env, units } = setup(t);
    const run = capture(env, dir);
    t.equal(await main(['install-service', '--dry-run'], run.io), 0, run.err());
    t.equal(run.err(), '');
    t.notOk(existsSync(units), 'nothing written');
    const files = unitsFromDryRun(run.out());
    t.same(
      [...files.keys()],
      [join(units, 'mcp-rootsd.socket'), join(units, 'mcp-rootsd.service')],
    );
    t.match(
      run.out(),
      /\nThen run:\n {2}systemctl --user daemon-reload\n {2}systemctl --user enable --now mcp-rootsd\.socket\n$/,
    );

    const socket = files.get(join(units, 'mcp-rootsd.socket'))!;
    for (const line of [
      'ListenStream=%t/mcp-roots/rootsd.sock',
      'SocketMode=0600',
      'DirectoryMode=0700',
    ]) {
      t.match(socket, `\n${line}\n`);
    }
    const service = files.get(join(units, 'mcp-rootsd.service'))!;
    // The daemon's bin itself: an installed copy has no dist/daemon/main.js (npm leaves links out).
    const daemonBin = join(REPO, 'dist/daemon/mcp-rootsd.cjs');
    t.match(
      service,
      `\nExecStart=${systemdWord(process.execPath, { executable: true })} ${systemdWord(daemonBin)}\n`,
    );
    // The template's note on its own ExecStart (mcp-rootsd from PATH) is not true of this one.
    t.notMatch(service, 'PATH', 'no word of finding mcp-rootsd on PATH');
    for (const line of [
      'ExecReload=/bin/kill -HUP $MAINPID',
      // Node on the bin directly reads none of its first lines (common/extra-ca-certs.ts).
      'UnsetEnvironment=NODE_EXTRA_CA_CERTS',
      'Restart=on-failure',
      'NoNewPrivileges=yes',
      'LockPersonality=yes',
      'RestrictRealtime=yes',
      'RestrictAddressFamilies=AF_UNIX',
      'SystemCallArchitectures=native',
    ]) {
      t.match(service, `\n${line}\n`);
    }
    for (const banned of ['ProtectHome', 'MemoryDenyWriteExecute', 'PrivateUsers', 'Requires=']) {
      t.notMatch(service, banned, `no ${banned}`);
    }
  },
);

void t.test(
  'systemd-analyze verify accepts both units as --dry-run writes them, without a warning',
  async (t) => {
    const { dir, env } = setup(t);
    const run = capture(env, dir);
    t.equal(await main(['install-service', '--dry-run'], run.io), 0, run.err());
    const out = t.testdir({});
    const names: string[] = [];
    for (const [path, text] of unitsFromDryRun(run.out())) {
      const name = path.split('/').pop()!;
      writeFileSync(join(out, name), text);
      names.push(name);
    }
    t.same(names, ['mcp-rootsd.socket', 'mcp-rootsd.service']);
    const r = verify(out, names);
    t.equal(r.output, '', 'systemd-analyze printed nothing');
    t.equal(r.status, 0);
  },
);

void t.test('ExecStart survives paths with spaces, %, $ and quotes', async (t) => {
  const dir = t.testdir({});
  const odd = join(dir, 'n o%d$e');
  mkdirSync(odd);
  symlinkSync(process.execPath, join(odd, 'node'));
  const daemon = join(dir, 'lib "x"', 'main 100% $HOME.js');
  const units = await renderUnits({ node: join(odd, 'node'), daemon, dir });
  for (const f of units.files) writeFileSync(f.path, f.text);
  const service = units.files.find((f) => f.name === 'mcp-rootsd.service')!.text;
  t.match(
    service,
    `\nExecStart="${dir}/n o%%d$e/node" "${dir}/lib \\"x\\"/main 100%% $$HOME.js"\n`,
  );
  const r = verify(dir, ['mcp-rootsd.socket', 'mcp-rootsd.service']);
  t.equal(r.output, '', 'the quoted executable is found');
  t.equal(r.status, 0);
  t.throws(() => systemdWord('/a\nb'), /control character/);
  t.throws(() => systemdWord('/a"b/node', { executable: true }), /quote or a backslash/);
  t.equal(systemdWord('/usr/bin/node'), '/usr/bin/node');
});

void t.test(
  'install-service without a reachable user manager writes the units, says what to run, and exits 1',
  async (t) => {
    const { dir, env, units } = setup(t);
    const run = capture(env, dir);
    const systemctl = fakeSystemctl(false);
    t.equal(await installService(run.io, { dryRun: false, systemctl: systemctl.run }), 1);
    t.same(systemctl.calls, ['show-environment']);
    t.equal(
      run.out(),
      `wrote ${join(units, 'mcp-rootsd.socket')}\nwrote ${join(units, 'mcp-rootsd.service')}\n`,
    );
    t.equal(
      run.err(),
      'rootsctl: the units are written but not enabled: no systemd user manager is reachable from here (`systemctl --user` failed). In your login session, run:\n' +
        '  systemctl --user daemon-reload\n  systemctl --user enable --now mcp-rootsd.socket\n' +
        "On a machine without systemd, run `mcp-rootsd` in a terminal (or your session's start-up) instead.\n",
    );
    t.same(readdirSync(units).sort(), ['mcp-rootsd.service', 'mcp-rootsd.socket']);

    const dry = capture(env, dir);
    t.equal(await main(['install-service', '--dry-run'], dry.io), 0);
    for (const [path, text] of unitsFromDryRun(dry.out())) {
      t.equal(readFileSync(path, 'utf8'), text, `${path} is what --dry-run shows`);
    }
  },
);

void t.test('install-service with a user manager reloads it and enables the socket', async (t) => {
  const { dir, env, units } = setup(t);
  const run = capture(env, dir);
  const systemctl = fakeSystemctl(true);
  t.equal(await installService(run.io, { dryRun: false, systemctl: systemctl.run }), 0);
  t.same(systemctl.calls, ['show-environment', 'daemon-reload', 'enable --now mcp-rootsd.socket']);
  t.match(
    run.out(),
    '$ systemctl --user daemon-reload\n$ systemctl --user enable --now mcp-rootsd.socket\n',
  );

  // Again: nothing changed, nothing to restart.
  const again = capture(env, dir);
  const second = fakeSystemctl(true);
  t.equal(await installService(again.io, { dryRun: false, systemctl: second.run }), 0);
  t.match(again.out(), `unchanged ${join(units, 'mcp-rootsd.service')}\n`);
  t.notMatch(again.out(), 'restart');

  // An old unit (another Node, say) is updated, and a running daemon is told to restart.
  const service = join(units, 'mcp-rootsd.service');
  writeFileSync(
    service,
    readFileSync(service, 'utf8').replace(/^ExecStart=.*$/m, 'ExecStart=/old/node /old/main.js'),
  );
  const updated = capture(env, dir);
  t.equal(
    await installService(updated.io, { dryRun: false, systemctl: fakeSystemctl(true).run }),
    0,
  );
  t.match(updated.out(), `updated ${service}\n`);
  t.match(updated.out(), 'restart it with `systemctl --user restart mcp-rootsd`');
});

void t.test('install-service exits 1 when systemctl fails (the units are written)', async (t) => {
  const { dir, env } = setup(t);
  const run = capture(env, dir);
  const systemctl = fakeSystemctl(true, ['enable']);
  t.equal(await installService(run.io, { dryRun: false, systemctl: systemctl.run }), 1);
  t.match(run.err(), '`systemctl --user enable --now mcp-rootsd.socket` failed (exit 1)');
});

void t.test('uninstall-service disables, removes the units and their enable links', async (t) => {
  const { dir, env, units } = setup(t);
  await installService(capture(env, dir).io, {
    dryRun: false,
    systemctl: fakeSystemctl(false).run,
  });
  // What `systemctl --user enable` would have made.
  mkdirSync(join(units, 'sockets.target.wants'));
  symlinkSync(
    join(units, 'mcp-rootsd.socket'),
    join(units, 'sockets.target.wants', 'mcp-rootsd.socket'),
  );
  writeFileSync(join(units, 'other.service'), '[Service]\nExecStart=/bin/true\n');

  const dry = capture(env, dir);
  t.equal(await main(['uninstall-service', '--dry-run'], dry.io), 0);
  t.match(
    dry.out(),
    'Would run:\n  systemctl --user disable --now mcp-rootsd.socket mcp-rootsd.service\n',
  );
  t.ok(existsSync(join(units, 'mcp-rootsd.socket')), '--dry-run removes nothing');

  const run = capture(env, dir);
  const systemctl = fakeSystemctl(true);
  t.equal(
    await uninstallService(run.io, { dryRun: false, systemctl: systemctl.run }),
    0,
    run.err(),
  );
  t.same(systemctl.calls, [
    'show-environment',
    'disable --now mcp-rootsd.socket mcp-rootsd.service',
    'daemon-reload',
  ]);
  t.same(readdirSync(units).sort(), ['other.service', 'sockets.target.wants']);
  t.same(readdirSync(join(units, 'sockets.target.wants')), []);

  const again = capture(env, dir);
  t.equal(
    await uninstallService(again.io, { dryRun: false, systemctl: fakeSystemctl(true).run }),
    0,
  );
  t.equal(again.out(), `mcp-rootsd's units are not installed in ${units}; nothing to remove.\n`);
});

void t.test(
  'uninstall-service without a user manager removes the files, says what to stop, and exits 1',
  async (t) => {
    const { dir, env, units } = setup(t);
    await installService(capture(env, dir).io, {
      dryRun: false,
      systemctl: fakeSystemctl(false).run,
    });
    const run = capture(env, dir);
    const systemctl = fakeSystemctl(false);
    t.equal(await uninstallService(run.io, { dryRun: false, systemctl: systemctl.run }), 1);
    t.same(systemctl.calls, ['show-environment']);
    t.notOk(existsSync(join(units, 'mcp-rootsd.service')));
    t.notOk(existsSync(join(units, 'mcp-rootsd.socket')));
    t.notOk(lstatSync(units).isSymbolicLink());
    t.equal(
      run.out(),
      `removed ${join(units, 'mcp-rootsd.socket')}\nremoved ${join(units, 'mcp-rootsd.service')}\n`,
    );
    t.equal(
      run.err(),
      'rootsctl: the units are removed but not stopped: no systemd user manager is reachable from here (`systemctl --user` failed). If mcp-rootsd runs in your login session, run there:\n' +
        '  systemctl --user stop mcp-rootsd.socket mcp-rootsd.service\n  systemctl --user daemon-reload\n',
    );
    const again = capture(env, dir);
    t.equal(
      await uninstallService(again.io, { dryRun: false, systemctl: fakeSystemctl(false).run }),
      0,
      'a second run has nothing to remove: exit 0',
    );
  },
);

void t.test('a reader that goes away (`| head`) ends the output, not the command', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'mr-svc-pipe-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const { spawn } = await import('node:child_process');
  const child = spawn(
    process.execPath,
    [join(REPO, 'dist/cli/rootsctl.cjs'), 'install-service', '--dry-run'],
    {
      env: { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, '.config') },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  // Closed before the first line is written: every write meets a reader that is gone (EPIPE).
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  t.equal(code, 0, 'exits as it would have');
  t.notMatch(stderr, /EPIPE|Unhandled/, `no stack trace: ${stderr}`);
});
