/** `rootsctl install-service` and `uninstall-service`: the systemd user units. */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdir, readFile, readlink, rename, unlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { errnoCode, ignoreMissing, RootsError } from '../../common/errors.js';
import { configHome, homeDir, tildify } from '../../common/locations.js';
import { packageRoot } from '../../common/package-info.js';
import { EXIT, type ExitCode, type Io } from '../io.js';
import { commandLine, ctl } from '../hint.js';
import type { Options } from '../options.js';

export const SOCKET_UNIT = 'mcp-rootsd.socket';
export const SERVICE_UNIT = 'mcp-rootsd.service';

/** Runs `systemctl --user ARGS...`; injectable so tests never touch a real user manager. */
export type Systemctl = (args: string[]) => Promise<{ code: number; output: string }>;

export interface ServiceOptions {
  dryRun: boolean;
  /** How to run `systemctl --user` (default: the real one, with `io.env`). */
  systemctl?: Systemctl;
}

/** The two unit files as installed: the templates in `systemd/` with an absolute `ExecStart`. */
export interface Units {
  dir: string;
  files: { name: string; path: string; text: string }[];
}

/**
 * Quote one word for `ExecStart=` (systemd.service(5), "Command lines"). `%` is doubled everywhere;
 * `$` only in arguments, since the executable's name is taken without variable expansion.
 */
export function systemdWord(word: string, opts: { executable?: boolean } = {}): string {
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(word)) {
    throw new RootsError(
      'PATH_INVALID',
      `${JSON.stringify(word)} has a control character; systemd cannot run it`,
    );
  }
  if (opts.executable && /["'\\]/.test(word)) {
    throw new RootsError(
      'PATH_INVALID',
      `systemd refuses an executable whose path has a quote or a backslash: ${word}. Install Node elsewhere.`,
    );
  }
  let escaped = word.replace(/[\\"]/g, (c) => `\\${c}`).replace(/%/g, '%%');
  if (!opts.executable) escaped = escaped.replace(/\$/g, () => '$$');
  return /^[\w@+=:,./%$-]+$/.test(word) ? escaped : `"${escaped}"`;
}

/** Render both units for `node` running `daemon` (absolute paths), from the templates in `systemd/`. */
export async function renderUnits(opts: {
  node: string;
  daemon: string;
  dir: string;
}): Promise<Units> {
  const templates = join(packageRoot(), 'systemd');
  const execStart = `ExecStart=${systemdWord(opts.node, { executable: true })} ${systemdWord(opts.daemon)}`;
  const files: Units['files'] = [];
  for (const name of [SOCKET_UNIT, SERVICE_UNIT]) {
    let text = await readFile(join(templates, name), 'utf8');
    if (name === SERVICE_UNIT) {
      if (!/^ExecStart=.*$/m.test(text)) {
        throw new RootsError('INTERNAL', `${join(templates, name)} has no ExecStart= line`);
      }
      // The line about the template's own ExecStart is not true of the installed unit.
      text = text
        .replace(/^ExecStart=.*$/m, () => execStart)
        .replace(/^# \(This template.*\n/m, '');
    }
    files.push({ name, path: join(opts.dir, name), text });
  }
  return { dir: opts.dir, files };
}

/** Where the units go: `$XDG_CONFIG_HOME/systemd/user` (`~/.config/systemd/user`). */
export function unitDir(io: Io): string {
  return join(configHome(io.env), 'systemd', 'user');
}

/** This installation's daemon entry point; an error telling how to build it when it is missing. */
export function daemonEntry(): string {
  const root = packageRoot();
  // The bin itself: a clone's build also links dist/daemon/main.js to it, an installed copy does not.
  const entry = join(root, 'dist', 'daemon', 'mcp-rootsd.cjs');
  if (!existsSync(entry)) {
    throw new RootsError(
      'PATH_NOT_FOUND',
      `this installation has no built daemon (${entry} is missing). Run \`npm run build\` in ${root} first.`,
    );
  }
  return entry;
}

/** The real `systemctl --user`, with a time limit; a missing systemctl is exit code 127. */
function realSystemctl(io: Io): Systemctl {
  return (args) =>
    new Promise((done) => {
      const child = spawn('systemctl', ['--user', ...args], {
        env: io.env,
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 30_000,
      });
      let output = '';
      child.stdout.on('data', (b: Buffer) => (output += b.toString()));
      child.stderr.on('data', (b: Buffer) => (output += b.toString()));
      child.once('error', (err) =>
        done({ code: errnoCode(err) === 'ENOENT' ? 127 : 1, output: `systemctl: ${err.message}` }),
      );
      child.once('close', (code) => done({ code: code ?? 1, output }));
    });
}

/** Whether `systemctl --user` reaches a running user manager from here. */
async function managerReachable(systemctl: Systemctl): Promise<boolean> {
  return (await systemctl(['show-environment'])).code === 0;
}

function command(args: string[]): string {
  return `systemctl --user ${args.join(' ')}`;
}

async function writeAtomic(path: string, text: string): Promise<void> {
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, text, { mode: 0o644 });
  await rename(temp, path);
}

async function runAll(io: Io, systemctl: Systemctl, steps: string[][]): Promise<boolean> {
  for (const args of steps) {
    io.out(`$ ${command(args)}\n`);
    const { code, output } = await systemctl(args);
    if (output.trim() !== '') io.out(output.endsWith('\n') ? output : `${output}\n`);
    if (code !== 0) {
      io.err(
        `rootsctl: \`${command(args)}\` failed (exit ${code}); fix the cause and run it again.\n`,
      );
      return false;
    }
  }
  return true;
}

const INSTALL_STEPS = [['daemon-reload'], ['enable', '--now', SOCKET_UNIT]];

/** Write both units with this Node and this installation, then enable the socket where systemd is reachable. */
export async function installService(io: Io, opts: ServiceOptions): Promise<ExitCode> {
  const home = homeDir(io.env);
  const units = await renderUnits({
    node: process.execPath,
    daemon: daemonEntry(),
    dir: unitDir(io),
  });
  if (opts.dryRun) {
    for (const f of units.files) io.out(`Would write ${f.path}:\n\n${f.text}\n`);
    io.out(`Then run:\n${INSTALL_STEPS.map((s) => `  ${command(s)}\n`).join('')}`);
    return EXIT.ok;
  }
  await mkdir(units.dir, { recursive: true });
  let serviceChanged = false;
  for (const f of units.files) {
    const old = await ignoreMissing(readFile(f.path, 'utf8'));
    await writeAtomic(f.path, f.text);
    if (f.name === SERVICE_UNIT && old !== undefined && old !== f.text) serviceChanged = true;
    io.out(
      `${old === undefined ? 'wrote' : old === f.text ? 'unchanged' : 'updated'} ${tildify(f.path, home)}\n`,
    );
  }
  const systemctl = opts.systemctl ?? realSystemctl(io);
  if (!(await managerReachable(systemctl))) {
    // The units are written but nothing is enabled: what was asked for has not happened yet.
    io.err(
      'rootsctl: the units are written but not enabled: no systemd user manager is reachable from here (`systemctl --user` failed). In your login session, run:\n' +
        INSTALL_STEPS.map((s) => `  ${command(s)}\n`).join('') +
        `On a machine without systemd, run \`${commandLine(io, 'mcp-rootsd', '')}\` in a terminal (or your session's start-up) instead.\n`,
    );
    return EXIT.fail;
  }
  if (!(await runAll(io, systemctl, INSTALL_STEPS))) return EXIT.fail;
  if (serviceChanged && (await systemctl(['is-active', '--quiet', SERVICE_UNIT])).code === 0) {
    io.out(
      'mcp-rootsd is running with the old unit: restart it with `systemctl --user restart mcp-rootsd`.\n',
    );
  }
  io.out(
    `mcp-rootsd starts on the first connection to its socket. Check it with \`${ctl(io, 'status')}\`; its log: \`journalctl --user -u mcp-rootsd\`.\n`,
  );
  return EXIT.ok;
}

/** The `enable` symlinks our [Install] sections create. */
function wantsLinks(dir: string): string[] {
  return [
    join(dir, 'sockets.target.wants', SOCKET_UNIT),
    join(dir, 'default.target.wants', SERVICE_UNIT),
  ];
}

/** Stop and disable both units where systemd is reachable, and remove them (and their enable links). */
export async function uninstallService(io: Io, opts: ServiceOptions): Promise<ExitCode> {
  const home = homeDir(io.env);
  const dir = unitDir(io);
  const present: string[] = [];
  for (const path of [join(dir, SOCKET_UNIT), join(dir, SERVICE_UNIT)]) {
    if (await ignoreMissing(lstat(path))) present.push(path);
  }
  for (const link of wantsLinks(dir)) {
    const target = await ignoreMissing(lstat(link));
    // Only a symlink to one of our unit files (or a dangling one to its name) is ours to remove.
    if (target?.isSymbolicLink() && (await readlink(link)).endsWith(`/${link.split('/').pop()!}`)) {
      present.push(link);
    }
  }
  const stop = ['disable', '--now', SOCKET_UNIT, SERVICE_UNIT];
  if (present.length === 0) {
    io.out(`mcp-rootsd's units are not installed in ${tildify(dir, home)}; nothing to remove.\n`);
    return EXIT.ok;
  }
  if (opts.dryRun) {
    io.out(`Would run:\n  ${command(stop)}\n`);
    io.out(`Would remove:\n${present.map((p) => `  ${p}\n`).join('')}`);
    io.out(`Then run:\n  ${command(['daemon-reload'])}\n`);
    return EXIT.ok;
  }
  const systemctl = opts.systemctl ?? realSystemctl(io);
  const reachable = await managerReachable(systemctl);
  const stopped = reachable && (await runAll(io, systemctl, [stop]));
  for (const path of present) {
    await ignoreMissing(unlink(path));
    io.out(`removed ${tildify(resolve(path), home)}\n`);
  }
  if (!reachable) {
    // The files are gone, but a user manager elsewhere may still run the units from memory:
    // what was asked for (the service stopped and gone) is not known to have happened.
    io.err(
      'rootsctl: the units are removed but not stopped: no systemd user manager is reachable from here (`systemctl --user` failed). If mcp-rootsd runs in your login session, run there:\n' +
        `  ${command(['stop', SOCKET_UNIT, SERVICE_UNIT])}\n  ${command(['daemon-reload'])}\n`,
    );
    return EXIT.fail;
  }
  if (!(await runAll(io, systemctl, [['daemon-reload']])) || !stopped) return EXIT.fail;
  return EXIT.ok;
}

/** `rootsctl install-service [--dry-run]`. */
export function install(io: Io, _args: string[], opts: Options): Promise<ExitCode> {
  return installService(io, { dryRun: opts['dry-run'] ?? false });
}

/** `rootsctl uninstall-service [--dry-run]`. */
export function uninstall(io: Io, _args: string[], opts: Options): Promise<ExitCode> {
  return uninstallService(io, { dryRun: opts['dry-run'] ?? false });
}
