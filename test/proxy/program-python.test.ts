/**
 * What a Python program shows besides its files (proxy/program-python.ts): the virtual
 * environment a command or `#!` line names, at its canonical place and never the home; a Python
 * outside the system, its prefix's `lib`.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { pythonDirs } from '../../proxy/program-python.js';
import { ownedShortDir, real } from '../helpers/proxy.js';

void t.test('environments and installations a Python program runs from', (t) => {
  const dir = real(ownedShortDir(t));
  const home = join(dir, 'home');
  const venv = join(home, '.local/share/pipx/venvs/x');
  mkdirSync(join(venv, 'bin'), { recursive: true });
  writeFileSync(join(venv, 'pyvenv.cfg'), 'home = /usr/bin\n');
  symlinkSync(join(dir, 'home'), join(dir, 'home-link'));
  // A Python built outside the system (uv's, pyenv's): its standard library under lib/.
  const prefix = join(home, '.local/share/uv/python/cpython-3.12');
  mkdirSync(join(prefix, 'bin'), { recursive: true });
  mkdirSync(join(prefix, 'lib/python3.12'), { recursive: true });
  // A "venv" at the home itself, as a planted pyvenv.cfg would make it.
  mkdirSync(join(home, 'bin'), { recursive: true });
  writeFileSync(join(home, 'pyvenv.cfg'), 'home = /usr/bin\n');

  const rows: [string, string, string, string[]][] = [
    ['the environment of a script in its bin', join(venv, 'bin/x'), join(venv, 'bin/x'), [venv]],
    [
      'the environment a link on PATH leads into',
      join(home, '.local/bin/x'),
      join(venv, 'bin/x'),
      [venv],
    ],
    [
      'an environment named through a link is not shown where it is not',
      join(dir, 'home-link/.local/share/pipx/venvs/x/bin/python3'),
      '/usr/bin/python3.11',
      [],
    ],
    ['the home is never an environment', join(home, 'bin/x'), join(home, 'bin/x'), []],
    [
      'a Python outside the system: its lib',
      join(prefix, 'bin/python3'),
      join(prefix, 'bin/python3.12'),
      [join(prefix, 'lib')],
    ],
    [
      "a system Python: nothing (the system's /usr is shown)",
      '/usr/bin/python3',
      '/usr/bin/python3.11',
      [],
    ],
    ['not Python: nothing', join(prefix, 'bin/pythonic'), join(prefix, 'bin/pythonic'), []],
  ];
  for (const [what, named, target, want] of rows)
    t.same(pythonDirs(named, target, { home, env: {} }), want, what);
  t.end();
});
