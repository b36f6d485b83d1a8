/**
 * Boundary attacks through the enforcing proxy: `..` segments, URL encoding, file:// URIs and
 * Unicode look-alikes (the other shapes are in proxy-boundary-shapes.test.ts; the workspace, the
 * policy and how a row is attacked are in test/helpers/proxy-boundary.ts).
 */
import t from 'tap';
import {
  attackRows,
  CAFE_NFD,
  NAIVE_NFD,
  read,
  startBoundary,
  type Row,
} from '../helpers/proxy-boundary.js';

const ROWS: Row[] = [
  // .. segments
  {
    what: '.. segment',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/../outside/o.txt`),
    expect: 'proxy',
    why: /\.\. segment/,
  },
  {
    what: '.. out of a denied dir',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/sub/../secret/s.txt`),
    expect: 'proxy',
    why: /\.\. segment/,
  },
  {
    what: 'trailing ..',
    tool: 'list_directory',
    args: read((w) => `${w}/alpha/..`),
    expect: 'proxy',
    why: /\.\. segment/,
  },
  // URL encoding in a plain path: a server that decodes paths would read another one
  {
    what: '%2e%2e in a path',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/%2e%2e/outside/o.txt`),
    expect: 'proxy',
    why: /%2e, %2f, %5c or %00/,
  },
  {
    what: '%2E%2E%2F in a path',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/%2E%2E%2Foutside%2Fo.txt`),
    expect: 'proxy',
    why: /%2e, %2f, %5c or %00/,
  },
  // file:// URIs in a path argument: the server would read them as relative paths
  {
    what: 'file:// URI outside',
    tool: 'read_text_file',
    args: read((w) => `file://${w}/outside/o.txt`),
    expect: 'proxy',
  },
  {
    what: 'file:// URI with a host',
    tool: 'read_text_file',
    args: read((w) => `file://evil${w}/alpha/a.txt`),
    expect: 'proxy',
    why: /not a valid file URI/,
  },
  {
    what: 'file://localhost URI',
    tool: 'read_text_file',
    args: read((w) => `file://localhost${w}/outside/o.txt`),
    expect: 'proxy',
  },
  {
    what: 'file:// URI with %2e%2e',
    tool: 'read_text_file',
    args: read((w) => `file://${w}/alpha/%2e%2e/outside/o.txt`),
    expect: 'proxy',
    why: /dot segment/,
  },
  {
    what: 'file:// URI with %2F',
    tool: 'read_text_file',
    args: read((w) => `file://${w}/alpha%2Fsecret/s.txt`),
    expect: 'proxy',
    why: /not a valid file URI/,
  },
  {
    what: 'file:// URI of an allowed dir, to create (the server resolves it under its first root)',
    tool: 'create_directory',
    args: read((w) => `file://${w}/alpha/made-by-uri`),
    expect: 'proxy',
    absent: ['a-ro/file:', 'alpha/file:'],
  },
  // Unicode look-alikes
  {
    what: 'fullwidth solidus',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha\uff0f..\uff0foutside/o.txt`),
    expect: 'proxy',
    why: /outside every root/,
  },
  {
    what: 'fullwidth full stops as ..',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/\uff0e\uff0e/outside/o.txt`),
    expect: 'contained',
  },
  {
    what: 'one-dot leader and combining mark as ..',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/\u2024\u2024/secret/s.txt`),
    expect: 'contained',
  },
  {
    what: 'NFD spelling of a denied NFC directory',
    tool: 'read_text_file',
    args: read((w) => `${w}/alpha/${CAFE_NFD}/c.txt`),
    expect: 'proxy',
    why: /denied/,
  },
  {
    what: 'NFD spelling of a denied NFC directory, listing',
    tool: 'list_directory',
    args: read((w) => `${w}/alpha/${CAFE_NFD}`),
    expect: 'proxy',
    why: /denied/,
  },
  {
    what: 'NFD spelling of a denied NFC directory, writing',
    tool: 'write_file',
    args: (w) => ({ path: `${w}/alpha/${CAFE_NFD}/c.txt`, content: 'overwritten' }),
    expect: 'proxy',
    why: /denied/,
  },
  {
    what: 'NFD spelling of an NFC root',
    tool: 'read_text_file',
    args: read((w) => `${w}/${NAIVE_NFD}/n.txt`),
    expect: 'proxy',
    why: /outside every root/,
  },
];

void t.test('boundary attacks through the enforcing proxy', async (t) => {
  const { w, fs } = await startBoundary(t);
  await attackRows(t, fs, w, ROWS);
});
