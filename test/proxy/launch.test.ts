import t from 'tap';
import { pathToFileURL } from 'node:url';
import type { Root } from '../../common/types.js';
import {
  expandLaunch,
  hasPlaceholders,
  launchRoots,
  sameLaunch,
  templateProblem,
  type LaunchRoot,
  type LaunchTemplate,
} from '../../proxy/launch.js';

const RW1 = { path: '/w/a b', readOnly: false };
const RO = { path: '/w/docs', readOnly: true };
const RW2 = { path: '/w/z', readOnly: false };
const ALL: LaunchRoot[] = [RW1, RO, RW2];

const tpl = (args: string[], more: Partial<LaunchTemplate> = {}): LaunchTemplate => ({
  command: 'srv',
  args,
  env: [],
  ...more,
});

void t.test('placeholders in arguments expand from the roots, in order', (t) => {
  const cases: [string, string[], LaunchRoot[], string[]][] = [
    [
      '{roots} is one argument per root',
      ['--x', '{roots}'],
      ALL,
      ['--x', '/w/a b', '/w/docs', '/w/z'],
    ],
    ['{roots:rw} keeps the writable ones', ['{roots:rw}'], ALL, ['/w/a b', '/w/z']],
    ['{roots:ro} keeps the read-only ones', ['{roots:ro}'], ALL, ['/w/docs']],
    ['{root} is the first root', ['{root}'], ALL, ['/w/a b']],
    ['{root} inside a longer argument', ['--repository={root}'], ALL, ['--repository=/w/a b']],
    ['{root} twice in one argument', ['{root}:{root}'], [RO], ['/w/docs:/w/docs']],
    [
      'no placeholder: untouched',
      ['--flag', '{other}', '{ROOTS}'],
      ALL,
      ['--flag', '{other}', '{ROOTS}'],
    ],
    ['a path with a space stays one argument', ['{roots}'], [RW1], ['/w/a b']],
  ];
  for (const [what, args, roots, want] of cases) {
    const r = expandLaunch(tpl(args), roots);
    t.ok(r.ok, what);
    if (r.ok) t.same(r.launch.args, want, what);
  }
  t.end();
});

void t.test('the environment and the working directory', (t) => {
  const r = expandLaunch(
    tpl([], {
      env: [
        ['ALLOWED', '{roots}'],
        ['REPO', '{root}'],
        ['RO', 'ro={roots:ro}'],
        ['PLAIN', 'x'],
      ],
      cwd: '{root}',
    }),
    ALL,
  );
  t.ok(r.ok);
  if (r.ok) {
    t.same(r.launch.env, [
      ['ALLOWED', '/w/a b:/w/docs:/w/z'],
      ['REPO', '/w/a b'],
      ['RO', 'ro=/w/docs'],
      ['PLAIN', 'x'],
    ]);
    t.equal(r.launch.cwd, '/w/a b');
  }
  t.end();
});

void t.test('a placeholder with nothing to stand for keeps the server from starting', (t) => {
  const cases: [string, LaunchTemplate, LaunchRoot[], RegExp][] = [
    ['{roots} with no roots', tpl(['{roots}']), [], /\{roots\}.*no roots/],
    ['{root} with no roots', tpl(['--repository={root}']), [], /\{root\}/],
    ['{roots:rw} with only read-only roots', tpl(['{roots:rw}']), [RO], /read-write/],
    ['{roots:ro} with only writable roots', tpl(['{roots:ro}']), [RW1], /read-only/],
    ['--env with no roots', tpl(['x'], { env: [['D', '{roots}']] }), [], /\{roots\}/],
    ['--cwd with no roots', tpl(['x'], { cwd: '{root}' }), [], /\{root\}/],
    ['one empty of two', tpl(['{roots:rw}', '{roots:ro}']), [RW1], /\{roots:ro\}/],
  ];
  for (const [what, template, roots, reason] of cases) {
    const r = expandLaunch(template, roots);
    t.notOk(r.ok, what);
    if (!r.ok) t.match(r.reason, reason, what);
  }
  t.end();
});

void t.test('templates that cannot mean one thing are refused before anything starts', (t) => {
  const cases: [string, LaunchTemplate, RegExp | undefined][] = [
    ['{roots} inside a longer argument', tpl(['--dirs={roots}']), /whole argument/],
    ['{roots:rw} inside a longer argument', tpl(['x{roots:rw}']), /whole argument/],
    ['{roots} as the command', tpl([], { command: '{roots}' }), /command/],
    ['{roots} as the working directory', tpl([], { cwd: '{roots}' }), /one path/],
    ['a bad variable name', tpl([], { env: [['1X', 'a']] }), /variable name/],
    ['a variable name with =', tpl([], { env: [['A=B', 'a']] }), /variable name/],
    ['{root} in a longer argument is fine', tpl(['--repository={root}']), undefined],
    ['{roots} in a variable is fine', tpl([], { env: [['A', 'x:{roots}']] }), undefined],
  ];
  for (const [what, template, problem] of cases) {
    const p = templateProblem(template);
    if (problem === undefined) t.equal(p, undefined, what);
    else t.match(p, problem, what);
  }
  t.end();
});

void t.test('hasPlaceholders, launchRoots and sameLaunch', (t) => {
  t.notOk(hasPlaceholders(tpl(['a', '{x}'])));
  t.ok(hasPlaceholders(tpl(['--r={root}'])));
  t.ok(hasPlaceholders(tpl([], { env: [['A', '{roots:ro}']] })));
  t.ok(hasPlaceholders(tpl([], { cwd: '{root}' })));
  const roots: Root[] = [
    { uri: pathToFileURL('/w/a b').href, _meta: { 'mcp-roots/readOnly': false } },
    { uri: pathToFileURL('/w/%x').href, _meta: { 'mcp-roots/readOnly': true } },
  ];
  t.same(launchRoots(roots), [
    { path: '/w/a b', readOnly: false },
    { path: '/w/%x', readOnly: true },
  ]);
  const a = expandLaunch(tpl(['{roots}']), ALL);
  const b = expandLaunch(tpl(['{roots}']), [RW1, RO, RW2]);
  const c = expandLaunch(tpl(['{roots}']), [RW1, { ...RO, readOnly: false }, RW2]);
  if (a.ok && b.ok && c.ok) {
    t.ok(sameLaunch(a.launch, b.launch));
    t.ok(sameLaunch(a.launch, c.launch), 'a kind change alone does not change {roots}');
  } else t.fail('expands');
  t.end();
});

void t.test('a root whose path holds a separator is left out of a value, never split', (t) => {
  // An agent that may make directories under a glob root names one `evil:.`, `x:~` or `!,.`:
  // split there, the server would read the working directory or `~` as roots. `!` sorts first.
  const evil = { path: '/w/g/!:.', readOnly: false };
  const comma = { path: '/w/g/!,.', readOnly: false };
  const home = { path: '/w/g/x:~', readOnly: false };
  const r = expandLaunch(
    tpl(['{roots}', '--repository={root}', '--dirs={root}', '{root}'], {
      env: [
        ['DIRS', '{roots}'],
        ['ONE', '{root}'],
        ['MORE', '/opt/x:{root}'],
      ],
      cwd: '{root}',
    }),
    [comma, evil, RW1, home],
  );
  t.ok(r.ok);
  if (r.ok) {
    t.same(
      r.launch.env,
      [
        ['DIRS', '/w/a b'],
        ['ONE', '/w/a b'],
        ['MORE', '/opt/x:/w/a b'],
      ],
      'every value holds the other roots only, {root} the first without a separator',
    );
    t.same(r.leftOut, ['/w/g/!,.', '/w/g/!:.', '/w/g/x:~'], 'and says which it left out');
    t.same(
      r.launch.args,
      [
        '/w/g/!,.',
        '/w/g/!:.',
        '/w/a b',
        '/w/g/x:~',
        '--repository=/w/a b',
        '--dirs=/w/a b',
        '/w/g/!,.',
      ],
      'one argument per root, and a whole {root}, take any path whole',
    );
    t.equal(r.launch.cwd, '/w/g/!,.', 'so does the working directory');
  }
  for (const sep of ['\n', '\r', ';', '\u2028', '\u2029', '\u0085']) {
    const odd = { path: `/w/g/a${sep}b`, readOnly: false };
    const e = expandLaunch(tpl([], { env: [['DIRS', '{roots}']] }), [odd, RW2]);
    const name = `U+${sep.charCodeAt(0).toString(16).padStart(4, '0')}`;
    t.same(e.ok && e.launch.env, [['DIRS', '/w/z']], name);
  }
  const none = expandLaunch(tpl([], { env: [['DIRS', '{roots}']] }), [evil]);
  t.notOk(none.ok, 'with every root left out the value would be empty: not started');
  t.end();
});
