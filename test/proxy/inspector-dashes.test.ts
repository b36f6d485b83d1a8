/**
 * The Inspector CLI takes the first `--` for itself, and since 0.15 a second one (its launcher and
 * its CLI each take one). The recipe writes `-- --` before the server's command and the proxy skips
 * a second `--`, so the same line works whichever the Inspector takes; a third is the command.
 */
import t from 'tap';
import { INSPECTOR_RECIPE, parseProxyArgs } from '../../proxy/options.js';

const words = INSPECTOR_RECIPE.split(' ');
const proxyArgs = words.slice(words.indexOf('mcp-roots-proxy') + 1);

/** What the proxy receives once a tool has taken the first `n` `--` of `argv`. */
function taken(argv: string[], n: number): string[] {
  const out = [...argv];
  for (let k = 0; k < n; k++) out.splice(out.indexOf('--'), 1);
  return out;
}

const CASES: [string, string[], { command: string; args: string[] }][] = [
  ['the Inspector took one (before 0.15)', proxyArgs, { command: 'node', args: ['server.js'] }],
  ['the Inspector took two (0.15)', taken(proxyArgs, 1), { command: 'node', args: ['server.js'] }],
  [
    'typed by hand',
    ['--server', 'fs', '--', 'node', 'server.js'],
    { command: 'node', args: ['server.js'] },
  ],
  [
    'a -- among the arguments stays',
    ['--server', 'fs', '--', 'node', '--', 'x'],
    { command: 'node', args: ['--', 'x'] },
  ],
];

for (const [name, argv, want] of CASES) {
  t.match(parseProxyArgs(argv), { server: 'fs', ...want }, name);
}

t.throws(
  () => parseProxyArgs(['--server', 'fs', '--', '--']),
  {
    message: /the server's command is missing after --/,
  },
  'two -- and nothing after: no command',
);
