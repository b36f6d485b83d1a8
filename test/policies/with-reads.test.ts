/**
 * A load given the reads the daemon has just compared (`withReads`) loads those bytes, once per
 * file, and reads everything else (another file, the same file a second time) from disk; a view
 * that is not the real filesystem is left alone. And a policy file read in one read (the short
 * read at its end) is the whole file, however its size falls against the buffer.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { nodeFs, withReads } from '../../policies/fs.js';
import { loadPolicySources } from '../../policies/load.js';
import { openPolicyFile, openPolicyFileSync } from '../../policies/read-policy-file.js';
import type { FsView } from '../../policies/model.js';
import { contextFor } from '../helpers/policy.js';

const policy = (root: string, include = '') =>
  `version: 1\n${include}servers:\n  fs:\n    roots: [{ path: ${root} }]\n`;

void t.test('a load takes the reads given, once each, and reads the rest', async (t) => {
  const dir = t.testdir({ a: {}, b: {}, c: {} });
  const main = join(dir, 'mcp-roots.yaml');
  const extra = join(dir, 'extra.yaml');
  writeFileSync(main, policy(join(dir, 'a'), `include: [${extra}]\n`));
  writeFileSync(extra, policy(join(dir, 'c')));
  const compared = await openPolicyFile(main);
  // The file changes after the comparison: the load is of the bytes compared.
  writeFileSync(main, policy(join(dir, 'b'), `include: [${extra}]\n`));
  const fs = withReads(nodeFs(), new Map([[main, compared]]));
  const first = await loadPolicySources(main, contextFor(dir, { fs }));
  t.same(
    first.files.map((f) => f.servers[0]!.roots[0]!.path),
    [join(dir, 'a'), join(dir, 'c')],
    'the main file as compared, the include from disk',
  );
  const again = await loadPolicySources(main, contextFor(dir, { fs }));
  t.equal(again.files[0]!.servers[0]!.roots[0]!.path, join(dir, 'b'), 'a second read is from disk');
});

void t.test('a view that is not the real filesystem is not given the reads', (t) => {
  const own: FsView = { ...nodeFs() };
  const read = { bytes: Buffer.from('x'), id: '0:0', real: '/x' };
  t.equal(withReads(own, new Map([['/x', read]])), own);
  t.end();
});

void t.test('a policy file is read whole whatever its size', async (t) => {
  const dir = t.testdir({});
  for (const size of [0, 1, 4095, 4096, 4097, 65536, 100_001]) {
    const file = join(dir, `f${size}`);
    const bytes = Buffer.alloc(size, 'a');
    writeFileSync(file, bytes);
    t.ok((await openPolicyFile(file)).bytes.equals(bytes), `${size} bytes, read async`);
    t.ok(openPolicyFileSync(file).bytes.equals(bytes), `${size} bytes, read blocking`);
  }
});
