/**
 * A `--` taken by a tool in between (the MCP Inspector CLI keeps the first one for itself): the
 * proxy says what probably happened and shows the form that works, whatever the command looks like.
 */
import t from 'tap';
import { INSPECTOR_RECIPE, parseProxyArgs } from '../../proxy/options.js';

const rows: { name: string; argv: string[]; working: string }[] = [
  {
    name: 'a node server',
    argv: ['--server', 'fs', 'node', 'server.js'],
    working: 'mcp-roots-proxy --server fs -- node server.js',
  },
  {
    name: 'npx with its own options',
    argv: ['--server=fs', 'npx', '-y', '@modelcontextprotocol/server-filesystem', '/my dir'],
    working:
      "mcp-roots-proxy --server fs -- npx -y @modelcontextprotocol/server-filesystem '/my dir'",
  },
  {
    name: 'options of the proxy after the command',
    argv: ['--server', 'fs', 'uvx', 'mcp-server-git', '--log-level', 'debug'],
    working: 'mcp-roots-proxy --server fs -- uvx mcp-server-git --log-level debug',
  },
  {
    name: 'the command first, --server never reached',
    argv: ['node', 'server.js', '--server', 'fs'],
    working: 'mcp-roots-proxy --server NAME -- node server.js --server fs',
  },
  {
    name: 'a command that looks like an option',
    argv: ['--server', 'fs', '--no-enforce', '-m', 'server'],
    working: 'mcp-roots-proxy --server fs -- -m server',
  },
];

for (const row of rows) {
  void t.test(`a swallowed --: ${row.name}`, (t) => {
    const err = t.throws(() => parseProxyArgs(row.argv), { code: 'USAGE' }) as Error;
    t.match(err.message, /no -- came before it/, 'says what is missing');
    t.match(err.message, /probably took the -- for itself \(the MCP Inspector CLI/, 'and why');
    t.ok(err.message.includes(`\n  ${row.working}\n`), `shows ${row.working}`);
    t.ok(err.message.includes(`\n  ${INSPECTOR_RECIPE}\n`), 'and the Inspector recipe');
    t.end();
  });
}

void t.test('the recipe it shows parses, once the Inspector has taken its --', (t) => {
  const words = INSPECTOR_RECIPE.split(' ');
  const mine = words.slice(words.indexOf('mcp-roots-proxy') + 1);
  t.match(parseProxyArgs(mine), { server: 'fs', command: 'node', args: ['server.js'] });
  t.end();
});

void t.test('with a -- present, an unknown option is only that', (t) => {
  t.throws(() => parseProxyArgs(['--server', 'fs', '--bogus', '--', 'node']), {
    message: /^unknown option --bogus \(the server's command goes after --\)/,
  });
  t.end();
});

void t.test('a typo of one of the proxy options names the option meant', (t) => {
  for (const argv of [
    ['--sever', 'fs', '--', 'node'],
    ['--sever', 'fs'],
  ]) {
    t.throws(() => parseProxyArgs(argv), {
      message: /^unknown option --sever \(did you mean --server\?\)/,
    });
  }
  t.throws(() => parseProxyArgs(['--server', 'fs', '--sanbox', '--', 'node']), {
    message: /did you mean --sandbox\?/,
  });
  t.end();
});
