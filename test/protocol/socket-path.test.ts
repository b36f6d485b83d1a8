import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { RootsError } from '../../common/errors.js';
import {
  checkSocketDir,
  checkSocketPathLength,
  ensureSocketDir,
  lockName,
  resolveSocketPath,
} from '../../protocol/socket-path.js';
import { blockingLookups } from '../../protocol/socket-lookups.js';

const uid = process.getuid!();
/** The client's check with blocking lookups (rootsctl's): the same rule, the same answers. */
const checkBlocking = (dir: string, id: number) => checkSocketDir(dir, id, blockingLookups);

void t.test('resolution order (docs/protocol.md, "Socket path")', (t) => {
  const rows: {
    name: string;
    socket?: string;
    env: Record<string, string>;
    runUser: boolean;
    want: string;
  }[] = [
    {
      name: '--socket first',
      socket: '/s/a.sock',
      env: { MCP_ROOTS_SOCKET: '/s/b.sock', XDG_RUNTIME_DIR: '/xdg' },
      runUser: true,
      want: '/s/a.sock',
    },
    {
      name: 'then MCP_ROOTS_SOCKET',
      env: { MCP_ROOTS_SOCKET: '/s/b.sock', XDG_RUNTIME_DIR: '/xdg' },
      runUser: true,
      want: '/s/b.sock',
    },
    {
      name: 'then XDG_RUNTIME_DIR',
      env: { XDG_RUNTIME_DIR: '/xdg' },
      runUser: true,
      want: '/xdg/mcp-roots/rootsd.sock',
    },
    {
      name: 'then /run/user/<uid> when it exists',
      env: {},
      runUser: true,
      want: '/run/user/1000/mcp-roots/rootsd.sock',
    },
    { name: 'else /tmp', env: {}, runUser: false, want: '/tmp/mcp-roots-1000/rootsd.sock' },
    {
      name: 'empty values count as unset',
      socket: '',
      env: { MCP_ROOTS_SOCKET: '', XDG_RUNTIME_DIR: '' },
      runUser: false,
      want: '/tmp/mcp-roots-1000/rootsd.sock',
    },
    {
      name: 'a relative XDG_RUNTIME_DIR is ignored',
      env: { XDG_RUNTIME_DIR: 'run' },
      runUser: true,
      want: '/run/user/1000/mcp-roots/rootsd.sock',
    },
    {
      name: 'a relative --socket is made absolute',
      socket: 'here.sock',
      env: {},
      runUser: false,
      want: '/work/dir/here.sock',
    },
    {
      name: 'a relative MCP_ROOTS_SOCKET too',
      env: { MCP_ROOTS_SOCKET: '../there.sock' },
      runUser: false,
      want: '/work/there.sock',
    },
  ];
  for (const row of rows) {
    const asked: string[] = [];
    const got = resolveSocketPath({
      socket: row.socket,
      env: row.env,
      uid: 1000,
      cwd: '/work/dir',
      exists: (dir) => {
        asked.push(dir);
        return row.runUser && dir === '/run/user/1000';
      },
    });
    t.equal(got, row.want, row.name);
    if (asked.length > 0)
      t.same(asked, ['/run/user/1000'], `${row.name}: only /run/user/<uid> is probed`);
  }
  t.end();
});

void t.test('socket paths are limited to 107 bytes, counted as bytes', (t) => {
  const fits = '/' + 'a'.repeat(106);
  t.doesNotThrow(() => checkSocketPathLength(fits), '107 bytes');
  const long = '/' + 'a'.repeat(107);
  t.throws(() => checkSocketPathLength(long), {
    code: 'SOCKET_PATH_TOO_LONG',
    message: `socket path ${long} is 108 bytes long; a Unix socket path may have at most 107. Choose a shorter --socket (or MCP_ROOTS_SOCKET).`,
  });
  const multibyte = '/' + 'é'.repeat(54); // 109 bytes in 55 characters
  t.throws(() => checkSocketPathLength(multibyte), { message: /is 109 bytes long/ });
  t.end();
});

void t.test('ensureSocketDir creates a private directory, with parents', async (t) => {
  const dir = join(t.testdir(), 'a', 'mcp-roots');
  await ensureSocketDir(dir, uid);
  const st = await lstat(dir);
  t.ok(st.isDirectory());
  t.equal(st.mode & 0o777, 0o700);
  await ensureSocketDir(dir, uid);
  await mkdir(join(dir, '..', 'open'), { mode: 0o755 });
  await chmod(join(dir, '..', 'open'), 0o755);
  await t.resolves(ensureSocketDir(join(dir, '..', 'open'), uid), '0755 is not writable by others');
});

for (const mode of [0o777, 0o770, 0o702]) {
  const shown = mode.toString(8).padStart(4, '0');
  void t.test(`a directory with mode ${shown} is refused`, async (t) => {
    const dir = join(t.testdir(), 'mcp-roots');
    await mkdir(dir, { mode: 0o700 });
    await chmod(dir, mode);
    const message = `the socket directory ${dir} is unsafe: its mode is ${shown}, writable by group or others, so another local user could plant a fake daemon there. Run \`chmod 700 ${dir}\`, or choose another --socket.`;
    await t.rejects(ensureSocketDir(dir, uid), { code: 'SOCKET_DIR_UNSAFE', message });
    await t.rejects(checkSocketDir(dir, uid), { code: 'SOCKET_DIR_UNSAFE', message });
    await t.rejects(checkBlocking(dir, uid), { code: 'SOCKET_DIR_UNSAFE', message });
  });
}

void t.test('a shared directory (sticky, as /tmp) is never to be made private', async (t) => {
  const dir = join(t.testdir(), 'shared');
  await mkdir(dir, { mode: 0o700 });
  await chmod(dir, 0o1777);
  const own = join(dir, `mcp-roots-${uid}`, 'rootsd.sock');
  const message = `the socket directory ${dir} is unsafe: its mode is 1777, writable by group or others, so another local user could plant a fake daemon there. Give the socket a directory of its own there (mcp-rootsd creates it, mode 0700): --socket ${own}, or choose another --socket.`;
  for (const check of [ensureSocketDir, checkSocketDir, checkBlocking])
    await t.rejects(check(dir, uid), { code: 'SOCKET_DIR_UNSAFE', message });
  await t.rejects(checkSocketDir(dir, uid + 1), {
    message: new RegExp(
      `owned by uid ${uid}, not by you .* Give the socket a directory of its own`,
    ),
  });
  // What it says works.
  await ensureSocketDir(join(dir, `mcp-roots-${uid}`), uid);
  await t.resolves(checkSocketDir(join(dir, `mcp-roots-${uid}`), uid));
});

void t.test('a symlink in place of the directory is refused', async (t) => {
  const base = t.testdir({ real: {} });
  await chmod(join(base, 'real'), 0o700);
  const dir = join(base, 'mcp-roots');
  await symlink(join(base, 'real'), dir);
  const want = { code: 'SOCKET_DIR_UNSAFE', message: /is a symbolic link, not a directory/ };
  await t.rejects(ensureSocketDir(dir, uid), want);
  await t.rejects(checkSocketDir(dir, uid), want);
  await t.rejects(checkBlocking(dir, uid), want);
});

void t.test('a file in place of the directory is refused', async (t) => {
  const base = t.testdir({ 'mcp-roots': 'not a dir' });
  await t.rejects(ensureSocketDir(join(base, 'mcp-roots'), uid), RootsError);
  for (const check of [checkSocketDir, checkBlocking]) {
    await t.rejects(check(join(base, 'mcp-roots'), uid), {
      code: 'SOCKET_DIR_UNSAFE',
      message: /is not a directory/,
    });
  }
});

void t.test("another user's directory is refused", async (t) => {
  const dir = join(t.testdir(), 'mcp-roots');
  await mkdir(dir, { mode: 0o700 });
  for (const check of [checkSocketDir, checkBlocking]) {
    await t.rejects(check(dir, uid + 1), {
      code: 'SOCKET_DIR_UNSAFE',
      message: new RegExp(`is owned by uid ${uid}, not by you \\(uid ${uid + 1}\\)`),
    });
  }
});

void t.test(
  'checkSocketDir lets a missing directory pass (the connect says "not running")',
  async (t) => {
    const base = t.testdir({ file: 'not a directory', good: {} });
    await chmod(join(base, 'good'), 0o700);
    for (const check of [checkSocketDir, checkBlocking]) {
      await t.resolves(check(join(base, 'good'), uid), 'a private directory of ours passes');
      await t.resolves(check(join(base, 'nope'), uid));
      await t.resolves(check(join(base, 'file', 'mcp-roots'), uid), 'ENOTDIR: missing too');
    }
  },
);

void t.test('lockName is an abstract name per user and path', (t) => {
  const path = '/run/user/1000/mcp-roots/rootsd.sock';
  const hex = createHash('sha256').update(path).digest('hex');
  t.equal(lockName(path, 1000), `\0mcp-roots/1000/${hex}`);
  t.not(lockName(path, 1001), lockName(path, 1000));
  t.ok(Buffer.byteLength(lockName(path, 4294967294)) <= 107);
  t.end();
});
