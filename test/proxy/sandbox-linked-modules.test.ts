/**
 * A sandboxed Node server whose `node_modules` is a link: the sandbox does not follow it (a server
 * may be able to make such a link lead anywhere: test/hardening/sandbox-program-links.test.ts), so
 * the server cannot load its packages and exits. The proxy's log says which link and what to do;
 * before, the only word was "the server went away before answering initialize".
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { spawnLineChild } from '../helpers/child-lines.js';
import { startDaemon } from '../helpers/daemon.js';
import { poll } from '../helpers/poll.js';
import { ownedShortDir, proxyFor } from '../helpers/proxy.js';

void t.test('a node_modules link the sandbox does not follow is named in the log', async (t) => {
  const dir = ownedShortDir(t);
  const srv = join(dir, 'srv');
  const dep = join(dir, 'elsewhere', 'node_modules', 'dep');
  mkdirSync(srv, { recursive: true });
  mkdirSync(dep, { recursive: true });
  mkdirSync(join(dir, 'root'));
  writeFileSync(join(dep, 'package.json'), '{"name":"dep","version":"1.0.0","main":"index.js"}');
  writeFileSync(join(dep, 'index.js'), 'module.exports = 1;\n');
  writeFileSync(join(srv, 'package.json'), '{"name":"srv","version":"0.0.0","type":"module"}');
  writeFileSync(join(srv, 'server.mjs'), "import 'dep';\nprocess.stdin.resume();\n");
  symlinkSync(join(dir, 'elsewhere', 'node_modules'), join(srv, 'node_modules'));
  const d = await startDaemon(t, `version: 1\nservers:\n  s:\n    roots: [{path: ${dir}/root}]\n`, {
    dir,
  });
  const child = spawnLineChild(
    t,
    proxyFor({ server: 's', socket: d.socket, extra: ['--sandbox'] }, [
      process.execPath,
      join(srv, 'server.mjs'),
    ]),
  );
  child.send({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'h', version: '0' },
    },
  });
  const said = await poll(
    () => /went away before answering initialize/.test(child.stderr()),
    60_000,
  );
  t.ok(said, `the server exits: ${child.stderr()}`);
  const warning = new RegExp(
    `warn: ${join(srv, 'node_modules').replace(/[.]/g, '\\.')} is a link, and the sandbox does not follow`,
  );
  t.match(child.stderr(), warning, 'the log names the link');
  t.match(child.stderr(), /make it a directory/, 'and says what to do');
});
