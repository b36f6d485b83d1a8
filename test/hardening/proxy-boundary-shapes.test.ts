/**
 * Boundary attacks through the enforcing proxy: case variants, separators, NUL bytes, lengths,
 * relative and Windows shapes, symlinks and prefix siblings, and a symlink swapped between calls
 * (the workspace, the policy and how a row is attacked are in test/helpers/proxy-boundary.ts).
 */
import { renameSync, symlinkSync } from 'node:fs';
import t from 'tap';
import { attackRows, read, startBoundary, type Row } from '../helpers/proxy-boundary.js';

const ROWS: Row[] = [
  // case variants on a case-sensitive filesystem
  {
    what: 'upper-case /TMP',
    tool: 'read_text_file',
    args: read((w) => `${w.toUpperCase()}/outside/o.txt`),
    expect: 'proxy',
    why: /outside every root/,
  },
  {
    what: 'upper-case root name',
    tool: 'read_text_file',
    args: read((w) => `${w}/ALPHA/secret/s.txt`),
    expect: 'proxy',
    why: /outside every root/,
  },
  {
    what: 'upper-case denied name inside a root',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/SECRET/s.txt`),
    expect: 'contained',
  },
  // separators
  {
    what: 'trailing slash on a denied dir',
    tool: 'list_directory',
    args: read((w) => `${w}/alpha/secret/`),
    expect: 'proxy',
    why: /denied/,
  },
  {
    what: 'trailing /. on a denied dir',
    tool: 'list_directory',
    args: read((w) => `${w}/alpha/secret/.`),
    expect: 'proxy',
    why: /denied/,
  },
  {
    what: 'doubled slashes',
    tool: 'read_text_file',
    args: read((w) => `/${w}//alpha//secret//s.txt`),
    expect: 'proxy',
    why: /denied/,
  },
  {
    what: 'backslashes',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha\\..\\outside\\o.txt`),
    expect: 'proxy',
    why: /backslash/,
  },
  {
    what: 'trailing space',
    tool: 'read_text_file',
    args: read((w) => `${w}/outside/o.txt `),
    expect: 'proxy',
    why: /ends with white space/,
  },
  {
    what: 'trailing U+0085 (white space to Python)',
    tool: 'read_text_file',
    args: read((w) => `${w}/outside/o.txt\u0085`),
    expect: 'proxy',
    why: /ends with white space/,
  },
  {
    what: 'leading space',
    tool: 'read_text_file',
    args: read((w) => ` ${w}/outside/o.txt`),
    expect: 'proxy',
    why: /relative path/,
  },
  {
    what: 'quoted path (the server strips quotes when it compares)',
    tool: 'read_text_file',
    args: read((w) => `"${w}/outside/o.txt"`),
    expect: 'proxy',
    why: /relative path/,
  },
  // NUL bytes
  {
    what: 'NUL byte',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/a.txt\0${w}/outside/o.txt`),
    expect: 'proxy',
    why: /NUL/,
  },
  {
    what: 'NUL byte after a denied file',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/secret/s.txt\0`),
    expect: 'proxy',
  },
  // length
  {
    what: 'path longer than PATH_MAX',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/${'d/'.repeat(2100)}x`),
    expect: 'proxy',
    why: /ENAMETOOLONG/,
  },
  {
    what: 'name longer than NAME_MAX, to write',
    tool: 'write_file',
    args: (w) => ({ path: `${w}/alpha/${'n'.repeat(300)}`, content: 'x' }),
    expect: 'proxy',
    why: /ENAMETOOLONG/,
  },
  // relative, ~, Windows shapes
  {
    what: 'relative path',
    tool: 'read_text_file',
    args: read(() => 'alpha/a.txt'),
    expect: 'proxy',
    why: /relative path/,
  },
  {
    what: 'dot-relative path',
    tool: 'read_text_file',
    args: read(() => './outside/o.txt'),
    expect: 'proxy',
    why: /relative path/,
  },
  {
    what: 'empty path',
    tool: 'list_directory',
    args: read(() => ''),
    expect: 'proxy',
    why: /empty path/,
  },
  {
    what: '~',
    tool: 'list_directory',
    args: read(() => '~'),
    expect: 'proxy',
    why: /starts with ~/,
  },
  {
    what: '~user',
    tool: 'read_text_file',
    args: read(() => '~root/.bashrc'),
    expect: 'proxy',
    why: /starts with ~/,
  },
  {
    what: 'Windows drive path',
    tool: 'read_text_file',
    args: read(() => 'C:\\Windows\\win.ini'),
    expect: 'proxy',
    why: /relative path/,
  },
  // symlinks and prefixes
  {
    what: 'symlink out of a root',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/link-out/o.txt`),
    expect: 'proxy',
    why: /outside every root/,
  },
  {
    what: 'symlink into a denied dir',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/to-secret/s.txt`),
    expect: 'proxy',
    why: /denied/,
  },
  {
    what: 'write through a dangling symlink pointing outside',
    tool: 'write_file',
    args: (w) => ({ path: `${w}/alpha/dangling`, content: 'x' }),
    expect: 'proxy',
    why: /outside every root/,
    absent: ['outside/new.txt'],
  },
  {
    what: 'sibling sharing a prefix',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha-evil/e.txt`),
    expect: 'proxy',
    why: /outside every root/,
  },
  // several paths, writes
  {
    what: 'one bad path among good ones',
    tool: 'read_multiple_files',
    args: (w) => ({ paths: [`${w}/alpha/a.txt`, `${w}/alpha/secret/s.txt`] }),
    expect: 'proxy',
    why: /denied/,
  },
  {
    what: 'write into a read-only root',
    tool: 'write_file',
    args: (w) => ({ path: `${w}/a-ro/w.txt`, content: 'x' }),
    expect: 'proxy',
    why: /read-only/,
    absent: ['a-ro/w.txt'],
  },
  {
    what: 'move a denied dir away',
    tool: 'move_file',
    args: (w) => ({ source: `${w}/alpha/secret`, destination: `${w}/alpha/public` }),
    expect: 'proxy',
    why: /denied/,
    absent: ['alpha/public'],
  },
  {
    what: 'move the parent of a denied dir',
    tool: 'move_file',
    args: (w) => ({ source: `${w}/alpha`, destination: `${w}/alpha2` }),
    expect: 'proxy',
    absent: ['alpha2'],
  },
];

void t.test('more boundary attacks through the enforcing proxy', async (t) => {
  const { w, fs } = await startBoundary(t);
  await attackRows(t, fs, w, ROWS);

  await t.test(
    'a symlink swapped between calls is judged where it points at check time',
    async (t) => {
      const link = `${w}/alpha/swap`;
      t.same(await fs.call('read_text_file', { path: `${link}/s.txt` }), {
        text: 'sub ok',
        isError: false,
      });
      const swapTo = (target: string) => {
        symlinkSync(target, `${link}.new`);
        renameSync(`${link}.new`, link);
      };
      swapTo(`${w}/alpha/secret`);
      let r = await fs.call('read_text_file', { path: `${link}/s.txt` });
      t.match(r.text, /^mcp-roots-proxy refused .*denied/, 'pointed at a denied dir: refused');
      swapTo(`${w}/outside`);
      r = await fs.call('read_text_file', { path: `${link}/o.txt` });
      t.match(r.text, /^mcp-roots-proxy refused .*outside every root/, 'pointed outside: refused');
      swapTo(`${w}/alpha/sub`);
      t.same(await fs.call('read_text_file', { path: `${link}/s.txt` }), {
        text: 'sub ok',
        isError: false,
      });
    },
  );
});
