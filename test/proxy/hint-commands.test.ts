/**
 * The proxy's hints name the socket it was given as an absolute path: a host shows them in its
 * log, far from the directory a relative `--socket` was meant in (the demo's
 * `.tmp/demo/rootsd.sock`).
 */
import t from 'tap';
import { hintCommands, daemonAwayHint } from '../../proxy/hint-commands.js';

void t.test('a relative --socket is named from the proxy directory', (t) => {
  const c = hintCommands({ PATH: '/nonexistent' }, '.tmp/demo/rootsd.sock', '/home/ada/mcp-roots');
  t.match(c.rootsctl, / --socket \/home\/ada\/mcp-roots\/\.tmp\/demo\/rootsd\.sock$/);
  t.match(c.daemon, / --socket \/home\/ada\/mcp-roots\/\.tmp\/demo\/rootsd\.sock$/);
  t.match(daemonAwayHint(c), /--socket \/home\/ada\/mcp-roots\/\.tmp\/demo\/rootsd\.sock/);
  t.notMatch(daemonAwayHint(c), / \.tmp\//);
  t.equal(c.systemd, false);
  const absolute = hintCommands({ PATH: '/nonexistent' }, '/run/x.sock', '/elsewhere');
  t.match(absolute.rootsctl, / --socket \/run\/x\.sock$/);
  t.equal(hintCommands({ PATH: '/nonexistent' }, undefined).systemd, true);
  t.end();
});
