/**
 * `mcp-roots-proxy --help` says what each option does, with its default (a user pass found only
 * the usage line): every option the proxy parses is in it.
 */
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { bin } from '../helpers/bin.js';

void t.test('--help names every option, with what it does', (t) => {
  const out = spawnSync(process.execPath, [bin('proxy'), '--help'], { encoding: 'utf8' });
  t.equal(out.status, 0, 'exit 0');
  const options = [
    '--server NAME',
    '--socket PATH',
    '--sandbox',
    '--no-enforce',
    '--ask-timeout SECONDS',
    '--allow-unknown-server',
    '--env NAME=VALUE',
    '--cwd DIR',
    '--log-level LEVEL',
  ];
  for (const o of options) t.match(out.stdout, new RegExp(`\\n  ${o} +\\S`), o);
  t.match(out.stdout, /default 60/, "the ask's default");
  t.match(out.stdout, /\$MCP_ROOTS_SOCKET/, 'where the socket is looked for');
  t.end();
});
