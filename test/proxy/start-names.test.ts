/**
 * What a start names, read as the programs it starts read it (proxy/start-names.ts): the cases
 * of the seventh attacker pass that a unit shows best. The end-to-end cases, with a real daemon,
 * proxy and bwrap, are in test/hardening/sandbox-other-writers.test.ts.
 */
import t from 'tap';
import { dataText, startNames } from '../../proxy/start-names.js';

const searched = async (command: string, args: string[], env = {}) =>
  (await startNames(command, args, env, '/c')).searched;

void t.test("where Python looks first: the script's directory, however it is named", async (t) => {
  t.same(await searched('/usr/bin/python3', ['/x/y/s.py']), ['/x/y']);
  t.same(await searched('/usr/bin/python3', ['--', '/x/y/s.py']), ['/x/y'], 'after --');
  t.same(
    await searched('/usr/bin/python3', ['--check-hash-based-pycs', 'default', '/x/y/s.py']),
    ['/x/y'],
    'after a long option and its value',
  );
  t.same(await searched('python3.11', ['-X', 'utf8', '-m', 'json.tool']), ['/c'], '-m: here');
  t.same(await searched('python3', ['-I', '-c', 'pass']), [], '-I: neither');
  t.same(
    await searched('python3', ['-c', 'pass'], { HOME: '/h' }),
    ['/c', '/h/.local/lib'],
    'and the user site-packages',
  );
  t.same(await searched('python3', ['-s', '-c', 'pass'], { HOME: '/h' }), ['/c'], '-s: no site');
});

void t.test('a Python behind a wrapper is still Python', async (t) => {
  t.same(await searched('env', ['python3', '-m', 'x']), ['/c']);
  t.same(await searched('nice', ['-n', '5', '/usr/bin/python3', '-c', 'pass']), ['/c']);
  t.same(await searched('env', ['-C', '/d', 'python3', '-m', 'x']), ['/d'], 'env -C');
  t.same(await searched('env', ['--chdir=/d', 'python3', '/e/s.py']), ['/e']);
  t.same(await searched('env', ['node', 's.js']), [], 'no Python');
  t.same(await searched('env', ['PYTHONSAFEPATH=1', 'python3', '-m', 'x']), [], 'env sets it');
  t.same(
    await searched('env', ['python3', '-m', 'x', 'PYTHONSAFEPATH=1']),
    ['/c'],
    "after the Python, a word is the module's argument",
  );
});

void t.test("variables a wrapper's words set are the program's environment", async (t) => {
  const names = await startNames(
    'env',
    ['BASH_ENV=/s/evil.sh', 'PYTHONPATH=/s/py', 'bash', '-c', 'true'],
    {},
    '/c',
  );
  t.same([...names.loaderPaths].sort(), ['/s/evil.sh', '/s/py']);
});

void t.test('a data: URL is read as the code it holds', (t) => {
  t.equal(
    dataText('data:text/javascript,import%22file:///s/e.mjs%22;'),
    'import"file:///s/e.mjs";',
  );
  const b64 = Buffer.from('import "file:///s/e.mjs"').toString('base64');
  t.equal(dataText(`data:text/javascript;base64,${b64}`), 'import "file:///s/e.mjs"');
  t.equal(dataText('data:,%E0%A4%A'), '%E0%A4%A', 'a bad escape: the text as it is');
  t.equal(dataText('./data:x'), undefined);
  t.end();
});
