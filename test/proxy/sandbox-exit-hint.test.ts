/**
 * A sandboxed server that fails on its own most often lacked a file the sandbox does not show (a
 * wrapper script's program elsewhere) or a place to write. Its own words ("Cannot find module")
 * said nothing of the sandbox, so the proxy's last line says what the sandbox shows and what to
 * add; an unsandboxed server's failure gets no such line.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { proxiedTransport } from '../helpers/proxied-server.js';
import { waitFor } from '../helpers/proxy.js';

const HINT =
  /the server exited with status 3\. It ran in the sandbox, .*add that path to sandbox\.read/;

void t.test('a sandboxed server that fails is told what the sandbox shows', async (t) => {
  const d = await startDaemon(t, 'version: 1\nservers:\n  s:\n    roots: []\n');
  const failing = ['/bin/sh', '-c', 'echo "Error: Cannot find module /elsewhere/x.js" >&2; exit 3'];
  for (const sandboxed of [true, false]) {
    const proxied = proxiedTransport({
      server: 's',
      socket: d.socket,
      proxyArgs: sandboxed ? ['--sandbox'] : [],
      command: failing,
    });
    const host = new Client({ name: 'test-host', version: '0' }, { capabilities: {} });
    await t.rejects(host.connect(proxied.transport), `sandboxed ${sandboxed}: no session`);
    // The host leaves at once, as one whose `initialize` failed does: that did not end the
    // server, which had already gone (the hint was once dropped when the host was quicker).
    await host.close();
    await waitFor(() => /exited with status 3/.test(proxied.stderr()), 30_000, 'the exit logged');
    t.match(proxied.stderr(), /Cannot find module/, 'the server’s own words are there');
    if (sandboxed) t.match(proxied.stderr(), HINT, 'and, sandboxed, what to do about them');
    else
      t.notMatch(proxied.stderr(), /It ran in the sandbox/, 'unsandboxed: nothing of the sandbox');
  }
});
