/**
 * The daemon's pointer file: written atomically, removed only by its writer, and trusted by
 * clients only when they and nobody else could have written it (the socket directory's rule).
 */
import { chmod, chown, lstat, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { RootsClient } from '../../protocol/client.js';
import {
  pointerFile,
  readSocketPointer,
  removeSocketPointer,
  writeSocketPointer,
} from '../../protocol/socket-pointer.js';
import { asyncLookups, blockingLookups } from '../../protocol/socket-lookups.js';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir } from '../helpers/proxy.js';

const uid = process.getuid!();
/** A uid nobody on the machine is likely to have; root may chown to it all the same. */
const STRANGER = 4_242_424;

void t.test(
  'the daemon writes one absolute path, 0600, in a 0700 directory it creates',
  async (t) => {
    const state = join(t.testdir(), 'a', 'state');
    await writeSocketPointer(state, '/run/user/1000/mcp-roots/rootsd.sock');
    t.equal(await readFile(pointerFile(state), 'utf8'), '/run/user/1000/mcp-roots/rootsd.sock\n');
    t.equal((await lstat(pointerFile(state))).mode & 0o777, 0o600);
    t.equal((await lstat(state)).mode & 0o777, 0o700);
    t.equal(await readSocketPointer(state, uid), '/run/user/1000/mcp-roots/rootsd.sock');
    await writeSocketPointer(state, '/tmp/other.sock');
    t.equal(await readSocketPointer(state, uid), '/tmp/other.sock', 'a new daemon replaces it');
  },
);

/** The client's two ways of looking (protocol/socket-lookups.ts): one rule, the same answers. */
const LOOKUPS = [
  ['async', asyncLookups],
  ['blocking', blockingLookups],
] as const;

void t.test('no state directory, or no pointer in it: nothing to follow', async (t) => {
  const base = t.testdir({ state: {}, file: 'not a directory' });
  for (const [name, lookups] of LOOKUPS) {
    t.equal(await readSocketPointer(join(base, 'missing'), uid, lookups), undefined, name);
    t.equal(await readSocketPointer(join(base, 'state'), uid, lookups), undefined, name);
    t.equal(await readSocketPointer(join(base, 'file', 'state'), uid, lookups), undefined, name);
  }
});

void t.test('both lookups read the pointer the daemon wrote', async (t) => {
  const state = join(t.testdir(), 'state');
  await writeSocketPointer(state, '/run/user/1000/mcp-roots/rootsd.sock');
  for (const [name, lookups] of LOOKUPS) {
    t.equal(
      await readSocketPointer(state, uid, lookups),
      '/run/user/1000/mcp-roots/rootsd.sock',
      name,
    );
  }
});

void t.test('a stopping daemon removes the pointer only while it names its socket', async (t) => {
  const state = t.testdir();
  await writeSocketPointer(state, '/a/rootsd.sock');
  await removeSocketPointer(state, '/b/rootsd.sock');
  t.equal(await readSocketPointer(state, uid), '/a/rootsd.sock', "another daemon's stays");
  await removeSocketPointer(state, '/a/rootsd.sock');
  t.equal(await readSocketPointer(state, uid), undefined, 'its own goes');
  await t.resolves(removeSocketPointer(state, '/a/rootsd.sock'), 'twice is fine');
});

/** Each way someone else could have put (or could change) the pointer; each must be refused. */
const unsafe: {
  name: string;
  make: (state: string, file: string) => Promise<void>;
  want: RegExp;
}[] = [
  {
    name: 'a pointer owned by someone else',
    make: (_s, file) => chown(file, STRANGER, STRANGER),
    want: new RegExp(
      `pointer .*/socket-path is unsafe: it is owned by uid ${STRANGER}, not by you`,
    ),
  },
  {
    name: 'a state directory owned by someone else',
    make: (state) => chown(state, STRANGER, STRANGER),
    want: new RegExp(`pointer .*/state is unsafe: it is owned by uid ${STRANGER}`),
  },
  ...[0o666, 0o620, 0o602].map((mode) => ({
    name: `a pointer with mode ${mode.toString(8)}`,
    make: (_s: string, file: string) => chmod(file, mode),
    want: new RegExp(`its mode is 0${mode.toString(8)}, writable by group or others`),
  })),
  ...[0o777, 0o770, 0o1777].map((mode) => ({
    name: `a state directory with mode ${mode.toString(8)}`,
    make: (state: string) => chmod(state, mode),
    want: /state is unsafe: its mode is .*, writable by group or others/,
  })),
  {
    name: 'a symbolic link in place of the pointer',
    make: async (state, file) => {
      await writeFile(join(state, 'elsewhere'), '/tmp/fake.sock\n', { mode: 0o600 });
      await symlink(join(state, 'elsewhere'), file);
    },
    want: /socket-path is unsafe: it is a symbolic link/,
  },
  {
    name: 'a directory in place of the pointer',
    make: (_s, file) => mkdir(file),
    want: /socket-path is unsafe: it is not a file/,
  },
  ...['relative/rootsd.sock', '', '/a.sock\n/b.sock', '/' + 'x'.repeat(107), '/a\0b'].map(
    (text) => ({
      name: `a pointer holding ${JSON.stringify(text.slice(0, 20))}`,
      make: (_s: string, file: string) => writeFile(file, `${text}\n`, { mode: 0o600 }),
      want: /does not hold one absolute socket path/,
    }),
  ),
];

for (const row of unsafe) {
  void t.test(`refused: ${row.name}`, async (t) => {
    const state = join(t.testdir(), 'state');
    await mkdir(state, { mode: 0o700 });
    const file = pointerFile(state);
    // Every case starts from a good pointer, except those that replace the file itself.
    if (!/symbolic link|directory in place/.test(row.name)) {
      await writeSocketPointer(state, '/tmp/real.sock');
    }
    await row.make(state, file);
    for (const [name, lookups] of LOOKUPS) {
      await t.rejects(
        readSocketPointer(state, uid, lookups),
        { code: 'SOCKET_DIR_UNSAFE', message: row.want },
        name,
      );
    }
  });
}

void t.test('a client with nothing at its default socket follows the pointer', async (t) => {
  const d = await startDaemon(t, `version: 1\nservers:\n  fs:\n    roots: []\n`);
  t.equal(await readSocketPointer(d.stateDir, uid), d.socket, 'the daemon left its pointer');
  // Where this environment would look there is nothing: as for a host that changes XDG_RUNTIME_DIR.
  const elsewhere = ownedShortDir(t);
  const env = { XDG_RUNTIME_DIR: elsewhere, HOME: elsewhere };
  const c = await RootsClient.connect({ env, stateDir: d.stateDir });
  t.teardown(() => c.close());
  t.equal(c.socketPath, d.socket, 'connected to the daemon the pointer names');
  t.equal((await c.status()).socket, d.socket);

  // A socket named explicitly is final: no pointer behind it.
  const named = join(elsewhere, 'named.sock');
  await t.rejects(
    RootsClient.connect({ env: { ...env, MCP_ROOTS_SOCKET: named }, stateDir: d.stateDir }),
    { code: 'DAEMON_UNREACHABLE', message: new RegExp(`connect ENOENT ${named}`) },
  );
  await t.rejects(RootsClient.connect({ socket: named, env, stateDir: d.stateDir }), {
    code: 'DAEMON_UNREACHABLE',
  });

  // An unsafe pointer fails the connection, naming the pointer and the fix.
  await chmod(pointerFile(d.stateDir), 0o666);
  await t.rejects(RootsClient.connect({ env, stateDir: d.stateDir }), {
    code: 'SOCKET_DIR_UNSAFE',
    message: /pointer .* is unsafe: its mode is 0666.* Run `chmod go-w /,
  });
  await chmod(pointerFile(d.stateDir), 0o600);

  // Stopped, the daemon takes its pointer with it; a stale one from a killed daemon leads nowhere,
  // and the error names where this environment looked.
  await d.daemon.close();
  t.equal(await readSocketPointer(d.stateDir, uid), undefined, 'the pointer is gone');
  await writeSocketPointer(d.stateDir, d.socket);
  await t.rejects(RootsClient.connect({ env, stateDir: d.stateDir }), {
    code: 'DAEMON_UNREACHABLE',
    message: new RegExp(`not running \\(connect ENOENT ${elsewhere}/mcp-roots/rootsd.sock\\)`),
  });
});
