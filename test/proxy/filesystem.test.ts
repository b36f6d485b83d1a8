import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, real, startProxiedFs, waitFor } from '../helpers/proxy.js';

/** A workspace under the daemon's short temp dir: roots, a sibling, an outside dir, a symlink out. */
function makeWorkspace(dir: string): string {
  const w = join(real(dir), 'w');
  for (const d of ['alpha/secret', 'alpha-evil', 'outside', 'ro', 'proj/one', 'soon', 'extra']) {
    mkdirSync(join(w, d), { recursive: true });
  }
  writeFileSync(join(w, 'alpha/a.txt'), 'alpha text');
  writeFileSync(join(w, 'alpha/move-me.txt'), 'move me');
  writeFileSync(join(w, 'alpha/secret/s.txt'), 'secret');
  writeFileSync(join(w, 'alpha-evil/e.txt'), 'evil');
  writeFileSync(join(w, 'outside/o.txt'), 'outside');
  writeFileSync(join(w, 'ro/r.txt'), 'read only');
  writeFileSync(join(w, 'soon/s.txt'), 'soon');
  symlinkSync(join(w, 'outside'), join(w, 'alpha/link-out'));
  return w;
}

function policy(w: string, dir: string, extra: { fs?: string; exp?: string } = {}): string {
  return `version: 1
servers:
  fs:
    roots:
      - path: ${w}/alpha
      - path: ${w}/ro
        readOnly: true
      - path: ${w}/proj/*
${extra.fs ?? ''}
    deny:
      - ${w}/alpha/secret
  cfg:
    roots:
      - path: ${real(dir)}
  exp:
    roots:
      - path: ${w}/soon
${extra.exp ?? ''}
`;
}

void t.test('the filesystem server under the proxy', async (t) => {
  const dir = ownedShortDir(t);
  const w = makeWorkspace(dir);
  const d = await startDaemon(t, policy(w, dir), { dir });
  const admin = await d.connect('admin');
  const reload = async (extra: { fs?: string; exp?: string }) => {
    d.writePolicy(policy(w, d.dir, extra));
    const r = await admin.reload();
    t.ok(r.ok, `the policy loads: ${JSON.stringify(r.errors)}`);
  };

  const [fs, exp, cfg] = await Promise.all([
    startProxiedFs(t, { server: 'fs', socket: d.socket }),
    startProxiedFs(t, { server: 'exp', socket: d.socket, hostRoots: false }),
    startProxiedFs(t, { server: 'cfg', socket: d.socket }),
  ]);
  // The server fetches its roots right after initialized; wait for that first list.
  const base = [`${w}/alpha`, `${w}/proj/one`, `${w}/ro`];
  await waitFor(async () => (await fs.allowed()).join() === base.join(), 30_000, 'first list');

  await t.test('list_allowed_directories is the policy’s list', async (t) => {
    t.same(await fs.allowed(), base);
    await waitFor(async () => (await exp.allowed()).join() === `${w}/soon`, 30_000, 'exp list');
    t.same(await exp.allowed(), [`${w}/soon`], 'also when the host declares no roots capability');
    t.equal(fs.hostRootsCalls(), 0, 'the host is never asked for its roots');
    const status = await admin.status();
    t.ok(
      status.connections.some((c) => /^mcp-roots-proxy \S+ \(server fs\)$/.test(c.client)),
      'status shows which server a proxy serves',
    );
  });

  await t.test('enforcement', async (t) => {
    const ok = await fs.call('read_text_file', { path: `${w}/alpha/a.txt` });
    t.same(ok, { text: 'alpha text', isError: false }, 'reading inside a root works');

    const refused = async (
      tool: string,
      args: Record<string, unknown>,
      path: string,
      why: RegExp,
    ) => {
      const r = await fs.call(tool, args);
      t.equal(r.isError, true, `${tool} ${path} is an error`);
      t.match(r.text, /^mcp-roots-proxy refused /, `${tool} ${path}: refused by the proxy`);
      t.ok(r.text.includes(path), `the message names ${path}`);
      t.match(r.text, why);
    };
    await refused(
      'read_text_file',
      { path: `${w}/outside/o.txt` },
      `${w}/outside/o.txt`,
      /outside every root/,
    );
    await refused(
      'read_text_file',
      { path: `${w}/alpha/link-out/o.txt` },
      `${w}/alpha/link-out/o.txt`,
      /outside every root/,
    );
    await refused(
      'read_text_file',
      { path: `${w}/alpha-evil/e.txt` },
      `${w}/alpha-evil/e.txt`,
      /outside every root/,
    );
    await refused(
      'read_text_file',
      { path: `${w}/alpha/secret/s.txt` },
      `${w}/alpha/secret/s.txt`,
      /denied/,
    );
    await refused(
      'read_multiple_files',
      { paths: [`${w}/alpha/a.txt`, `${w}/outside/o.txt`] },
      `${w}/outside/o.txt`,
      /outside every root/,
    );
    await refused('read_text_file', { path: 'alpha/a.txt' }, 'alpha/a.txt', /absolute path/);
    await refused('read_text_file', { path: '~/a.txt' }, '~/a.txt', /absolute path/);
    await refused(
      'read_text_file',
      { path: `${w}/alpha/../outside/o.txt` },
      `${w}/alpha/../outside/o.txt`,
      /absolute path/,
    );

    t.same(await fs.call('read_text_file', { path: `${w}/ro/r.txt` }), {
      text: 'read only',
      isError: false,
    });
    await refused(
      'write_file',
      { path: `${w}/ro/new.txt`, content: 'no' },
      `${w}/ro/new.txt`,
      /read-only/,
    );
    await refused(
      'move_file',
      { source: `${w}/alpha/move-me.txt`, destination: `${w}/ro/move-me.txt` },
      `${w}/ro/move-me.txt`,
      /read-only/,
    );
    t.ok(existsSync(join(w, 'alpha/move-me.txt')), 'the move never happened');
    t.notOk(existsSync(join(w, 'ro/new.txt')), 'the write never happened');

    const wrote = await fs.call('write_file', { path: `${w}/alpha/new.txt`, content: 'yes' });
    t.equal(wrote.isError, false, 'writing in a writable root works');

    const r = await cfg.call('write_file', { path: d.config, content: 'version: 1\n' });
    t.equal(r.isError, true, 'the policy file cannot be written through a writable root');
    t.match(r.text, /^mcp-roots-proxy refused /);
    t.ok(r.text.includes(d.config));
    t.same(await cfg.call('read_text_file', { path: d.config }), {
      text: policy(w, d.dir),
      isError: false,
    });
  });

  await t.test('changes reach the server within a second', async (t) => {
    await reload({ fs: `      - path: ${w}/extra\n` });
    const edit = await waitFor(
      async () => (await fs.allowed()).includes(`${w}/extra`),
      1000,
      'edit',
    );
    t.pass(`a policy edit arrived in ${edit} ms`);
    t.same((await fs.call('read_text_file', { path: `${w}/ro/r.txt` })).isError, false);

    mkdirSync(join(w, 'proj/two'));
    await admin.reload(); // file watching of globs is another issue; reload stands in for it
    const glob = await waitFor(
      async () => (await fs.allowed()).includes(`${w}/proj/two`),
      1000,
      'glob',
    );
    t.pass(`a new directory matching a glob arrived in ${glob} ms`);
    writeFileSync(join(w, 'proj/two/t.txt'), 'two');
    t.same(await fs.call('read_text_file', { path: `${w}/proj/two/t.txt` }), {
      text: 'two',
      isError: false,
    });

    const expires = Date.now() + 2000;
    const iso = new Date(expires).toISOString();
    await reload({
      fs: `      - path: ${w}/extra\n      - path: ${w}/soon\n        expires: ${iso}\n`,
      exp: `        expires: ${iso}\n`,
    });
    await waitFor(async () => (await fs.allowed()).includes(`${w}/soon`), 1000, 'soon listed');
    t.equal((await fs.call('read_text_file', { path: `${w}/soon/s.txt` })).isError, false);
    await waitFor(async () => !(await fs.allowed()).includes(`${w}/soon`), 30_000, 'expiry');
    const late = Date.now() - expires;
    t.ok(late < 1000, `an expiry arrived ${late} ms after the instant`);

    // exp's only root expired: the server keeps its old list, the proxy does not.
    t.same(await exp.allowed(), [`${w}/soon`], 'the server itself still lists the expired root');
    const r = await exp.call('read_text_file', { path: `${w}/soon/s.txt` });
    t.equal(r.isError, true);
    t.match(r.text, /^mcp-roots-proxy refused .*outside every root/);
    // The refusal names the root that ended, so the person is not left looking for it.
    t.ok(
      r.text.includes(`: its root ${w}/soon (`) && r.text.includes(` expired at ${iso}`),
      `the refusal names the expired root: ${r.text}`,
    );
    t.equal(fs.hostRootsCalls(), 0, 'the host is never asked for its roots');
  });
});
