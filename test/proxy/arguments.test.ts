/**
 * Where the proxy finds paths in a call: argument names, values, file: URIs, and the bounds on
 * one call (schema shapes are in argument-schemas.test.ts). Driven directly; test/hardening/
 * drives the same through the proxy.
 */
import t from 'tap';
import { pathValues } from '../../proxy/arguments.js';
import { checkValues, MAX_PATHS_PER_CALL, showPath } from '../../proxy/enforce.js';
import { fileUriPath } from '../../proxy/file-uri.js';
import { isPathName, isUrlName, looksLikePath } from '../../proxy/path-names.js';

void t.test('path-like argument names, whatever their case and separators', (t) => {
  const paths = [
    'path',
    'paths',
    'file',
    'files',
    'filename',
    'file_path',
    'filePath',
    'FilePath',
    'file-path',
    'repo_path',
    'notebook_path',
    'input_path',
    'target',
    'TARGET_DIR',
    'cwd',
    'root',
    'dest',
    'destination',
    'output',
    'outputDir',
    'dir',
    'directory',
    'workDir',
    'folder',
    'source',
    'src',
    'dst',
    'Input-File',
    // As Go's encoding/json folds them: a long s, a dotted capital I.
    '\u017fource',
    'de\u017ft',
    'f\u0130le',
  ];
  for (const name of paths) t.ok(isPathName(name), `${name} is path-like`);
  const others = [
    'content',
    'text',
    'oldText',
    'pattern',
    'query',
    'name',
    'url',
    'recursive',
    'edits',
    'head',
    'imageUrls',
    'base_uri',
  ];
  for (const name of others) t.notOk(isPathName(name), `${name} is not`);
  // A name about both takes a path (a URL with an authority passes as a URL: arguments.ts).
  for (const name of ['source_url', 'fileUri', 'sourceurl', 'urlForFile', 'pathOrUrl', 'dirurl']) {
    t.ok(isPathName(name), `${name} is path-like`);
    t.ok(isUrlName(name), `${name} is about URLs`);
  }
  for (const name of ['security_policy_file', 'hourly', 'path', 'curious']) {
    t.notOk(isUrlName(name), `${name} is not about URLs`);
  }
  // Names that only hold the letters of "url" or "uri" are not about URLs.
  for (const name of [
    'security_policy_file',
    'your_local_dir',
    'yourlocaldir',
    'hourly_log_dir',
    'during_path',
    'mercurial_repo',
    'curiousFile',
  ]) {
    t.ok(isPathName(name), `${name} is path-like`);
  }
  t.end();
});

void t.test('strings that are paths by their value, whatever the name', (t) => {
  const paths = [
    '/etc/passwd',
    '//etc/passwd',
    '/',
    '~',
    '~/x',
    '~root/.bashrc',
    'file:///etc/passwd',
    'FILE:///etc/passwd',
    'file:/etc/passwd',
    'file://localhost/etc/passwd',
    '$HOME/.ssh/id_rsa',
    '${HOME}/.ssh/id_rsa',
    '../secret',
    './x/../../y',
    '..\\secret',
    ' /etc/passwd ',
    '\n/etc/passwd\n',
    '/home/me/My Documents/x',
    '/*',
    // file: URIs to URL parsers, which drop leading controls and every tab, CR and LF.
    'fi\tle:///etc/passwd',
    '\u0001file:///etc/passwd',
    'FIL\rE:///etc/passwd',
    // A `..` name takes the name before it away, white space and line ends and all.
    '/no such dir/../etc/passwd',
    '/x\ty/../etc/passwd',
    '/a\u00a0b/../etc/passwd',
    '// x/../etc/passwd',
    '/in/a\nb/../../etc/passwd',
    '/in/a\nb/../x\ny/../../etc/passwd',
    '/a b\\..\\etc',
    'sub/../../secret',
    'sub dir/../../secret',
    'a\nb/../../secret',
    '..',
    'x/../..',
    '~ a/../../x',
    '~/a/../..',
    '$HOME/..',
    './a b/../c',
    // A line end in a later name: a file of that name is made outside the root.
    '/etc/passwd\nline two',
    '/in/new\nfile',
    '../out/new\nfile',
    'x/../../../../etc/passwd\nfoo',
    '../\n/etc/passwd',
    // What Python's str.strip() takes besides JavaScript's white space.
    '\u0085/etc/hostname',
    '\u001c/etc/hostname',
    '\u001f/etc/hostname',
    // Wrapped as Python's urllib unwraps before it opens.
    '<file:///etc/passwd>',
    '<URL:file:///etc/passwd>',
    'URL:file:///etc/passwd',
    ' <URL: file:///etc/passwd > ',
    // Variables Go's os.ExpandEnv expands (mostly to nothing), and a variable alone.
    '$1/etc/passwd',
    '$@/etc/passwd',
    '${}/etc/passwd',
    '${/etc/passwd',
    '${HOME:-x}/etc/passwd',
    '${ X}/etc/passwd',
    '$HOME',
    '${HOME}',
    // A fourth pass: variables in a row, Python's white space inside a wrapper, a character only
    // Python ends a line at, percent-encoded dots, NFKC forms.
    '$A$B/etc/passwd',
    '${}${}/etc/passwd',
    '$HOME$X/.ssh',
    '$HOME$X',
    '<file:///etc/passwd>\u001f',
    '\u0085<file:///etc/passwd>',
    '<URL:\u0085file:///etc/passwd>',
    '\u0085URL:file:///etc/passwd',
    'a b\u0085c/../../../../etc/passwd',
    'a\u001fb\u001ec/../../../etc/passwd',
    '%2e%2e/%2e%2e/etc/passwd',
    '%2Fetc%2Fpasswd',
    '\uff0fetc\uff0fpasswd',
    '\u2025/\u2025/etc/passwd',
    '\uff5e/.ssh',
    // A fifth: a special variable or an unclosed ${ beside a named one; an escape Python's
    // unquote leaves where decodeURIComponent gives up; readings one after the other.
    '$HOME$1',
    '$1$HOME',
    '$HOME${',
    '%2fetc/passwd/x%/..',
    '%2e%2e/%2e%2e/%zz/%2e%2e/etc/passwd',
    '%2e%2e/%ff/%2e%2e/%2e%2e/etc/passwd',
    '\uff052e\uff052e/\uff052e\uff052e/etc/passwd',
    '%EF%BC%8Fetc%EF%BC%8Fpasswd',
    // A sixth: a variable Go empties inside a name makes a `..`; unquote_plus's `+`; a
    // variable with text after it; escapes encoded twice.
    '.$1./.$1./etc/passwd',
    '.${}./etc/passwd',
    '.${./etc/passwd',
    '+/etc/passwd',
    '+%2Fetc%2Fpasswd',
    '${HOME}_x',
    '%252e%252e/%252e%252e/etc/passwd',
  ];
  for (const v of paths) t.ok(looksLikePath(v), `${JSON.stringify(v)} is a path`);
  const text = [
    '// TODO: fix',
    '/* comment */',
    '~ 5 minutes',
    'file: the report',
    './build.sh --fast',
    'line one\n/etc/passwd',
    'cost $5',
    'a%2Fb',
    '$5',
    '50% off',
    'echo $HOME is set',
    'C++/CLI',
    '+/- 5',
    'https%3A%2F%2Fexample.com',
    '${a}b',
    'price: $HOME',
    '/**\n * see a/../../b\n */',
    'relative/path',
    'hello',
    '',
    '.',
    'https://example.com/x',
    'https://example.com/a/../b',
    'a/../b',
    '/a b/../c d/x',
    '// cd ../.. first',
    "/**\n * header\n */\nimport a from '../../lib';\n",
    "export * from '../../lib';",
    'see docs/../README',
    '\nfile: the report',
    '/*\n*/',
  ];
  for (const v of text) t.notOk(looksLikePath(v), `${JSON.stringify(v)} is not`);
  t.end();
});

void t.test('file: URIs: one canonical path, or refused', (t) => {
  const good: [string, string][] = [
    ['file:///a/b', '/a/b'],
    ['file://localhost/a', '/a'],
    ['file://LocalHost/a', '/a'],
    ['FILE:///a', '/a'],
    ['file:/a', '/a'],
    ['file:///a%20b', '/a b'],
    ['file:////a//b', '/a/b'],
    ['file:///caf%C3%A9', '/caf\u00e9'],
    ['file:///a/..b/c.', '/a/..b/c.'],
    ['file:///', '/'],
  ];
  for (const [uri, path] of good) t.same(fileUriPath(uri), { path }, uri);
  const bad: [string, RegExp][] = [
    ['file:///a/../b', /dot segment/],
    ['file:///a/./b', /dot segment/],
    ['file:///a/..', /dot segment/],
    ['file:///a/%2e%2e/b', /dot segment/],
    ['file:///a/%2E%2E/b', /dot segment/],
    ['file:///a/.%2e/b', /dot segment/],
    ['file:///a/%2E./b', /dot segment/],
    ['file:///a/%2e/b', /dot segment/],
    ['file://localhost/a/%2e%2E/b', /dot segment/],
    ['file://host/a', /host "host"/],
    ['file://localhost:80/a', /host/],
    ['file://user@localhost/a', /host/],
    ['file://%6cocalhost/a', /host/],
    ['file:///a%2fb', /percent-encodes \//],
    ['file:///a%2F..%2Fb', /percent-encodes \//],
    ['file:///a%5cb', /percent-encodes/],
    ['file:///a%00b', /percent-encodes/],
    ['file:///a\\..\\b', /backslash/],
    ['file:///a?x=1', /query or fragment/],
    ['file:///a#x', /query or fragment/],
    ['file:///a%252e%252e/b', /twice/],
    ['file:///a%zz', /two hex digits/],
    ['file:///a%ff', /not UTF-8/],
    ['file:///a\tb', /raw space or control/],
    ['file:///a b', /raw space or control/],
    ['file:///a ', /raw space or control/],
    ['file:a/b', /no absolute path/],
    ['file:', /no absolute path/],
    ['file://localhost', /no absolute path/],
    ['file:///C|/x', /drive letter/],
    ['<file:///a>', /wrapped/],
    ['URL:file:///a', /wrapped/],
    ['<URL:file:///a>', /wrapped/],
    ['\u0085file:///a', /raw space or control/],
    ['<file:///a>\u001f', /raw space or control/],
  ];
  for (const [uri, why] of bad) {
    const r = fileUriPath(uri);
    t.ok('problem' in r, `${JSON.stringify(uri)} is refused`);
    if ('problem' in r) t.match(r.problem, why, `${JSON.stringify(uri)}: ${r.problem}`);
  }
  t.end();
});

void t.test('what one call may cost', async (t) => {
  let deep: unknown = 'x';
  for (let i = 0; i < 100; i++) deep = { a: deep };
  t.match(pathValues({ deep }, undefined), { reason: /nests deeper than 64 levels/ });
  t.match(pathValues({ many: new Array(100_001).fill(0) }, undefined), {
    reason: /more than 100000 values/,
  });
  const asked: string[] = [];
  const check = (path: string) => {
    asked.push(path);
    return Promise.resolve({ allowed: true, access: 'read' as const, reason: '' });
  };
  const many = Array.from({ length: MAX_PATHS_PER_CALL + 1 }, (_, i) => ({
    value: `/w/${i}`,
    uri: false,
    where: `paths[${i}]`,
  }));
  t.match(await checkValues(many, 'read', check), { reason: /at most 1000 in one call/ });
  const heavy = Array.from({ length: 100 }, (_, i) => ({
    value: `/w/${'x'.repeat(3000)}${i}`,
    uri: false,
    where: `paths[${i}]`,
  }));
  t.match(await checkValues(heavy, 'read', check), { reason: /at most 262144 bytes of paths/ });
  const long = [{ value: `/w/${'d/'.repeat(2100)}`, uri: false, where: 'path' }];
  t.match(await checkValues(long, 'read', check), { reason: /PATH_MAX.*ENAMETOOLONG/ });
  const huge = [{ value: `/${'x'.repeat(40_000)}`, uri: true, where: 'path' }];
  const refused = await checkValues(huge, 'read', check);
  t.match(refused, { reason: /longer than any path Linux opens/ });
  t.ok(refused!.reason.length < 500, 'the refusal shows the value cut short');
  t.ok(showPath(refused!.path).length < 300, 'and so does the proxy, showing it');
  const shapes = [
    { value: '/w/ok', uri: false, where: 'a' },
    { value: 'rel', uri: false, where: 'b' },
  ];
  t.match(await checkValues(shapes, 'read', check), { reason: /relative path.*\(argument b\)/ });
  t.same(asked, [], 'refused on shape and cost before any daemon check');
});

void t.test('long runs of variable syntax are read, not backtracked over', (t) => {
  // A pattern of optional parts repeated took 3.4 s on 80 characters of `${$`, doubling with
  // each few more: these 20,000-character runs would never end, which the runner's time limit
  // reports. Read in one pass, they end at once.
  t.equal(looksLikePath('${$'.repeat(20_000) + '}x'), false, 'no separator after the run');
  t.equal(looksLikePath('${'.repeat(20_000) + '}/x'), true, 'a separator after it');
  t.equal(looksLikePath('$'.repeat(20_000)), false, 'specials alone');
  t.end();
});
