/**
 * The proxy's watch for denied paths (proxy/deny-watch.ts) and names that are not UTF-8. Node
 * reads such a name with U+FFFD, under which the entry cannot be looked up: it was taken for an
 * entry that went, and a Latin-1 `clé.secret` under a `**\/*.secret` deny, or a Latin-1 directory
 * moved in holding `.env`, stayed visible to the sandboxed server. Each row makes entries after the
 * watch is set; what is denied, and every directory that cannot be watched by name, is reported
 * (the restart's layout hides it, sandbox-mounts.ts), found by its event or, deeper in a directory
 * moved in whole, by the walk of that directory; anything else is not.
 */
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { isSentinel, watchedRoot } from '../helpers/deny-watch.js';

/** `dir` + `/` + `name`, with the byte 0xE9 (Latin-1 `é`, not UTF-8) after `name`. */
const latin1 = (dir: string, name: string): Buffer =>
  Buffer.concat([Buffer.from(`${dir}/${name}`), Buffer.from([0xe9])]);

/** What a row makes in the root `r`; the name reported (below `r`, U+FFFD for the byte), if any. */
const ROWS: [string, (r: string) => void, string | undefined][] = [
  ['a UTF-8 control: a denied file', (r) => writeFileSync(join(r, 'a.secret'), ''), 'a.secret'],
  [
    'a Latin-1 file under a pattern deny',
    (r) => writeFileSync(Buffer.concat([latin1(r, 'cl'), Buffer.from('.secret')]), ''),
    'cl\uFFFD.secret',
  ],
  ['a Latin-1 directory', (r) => mkdirSync(latin1(r, 'caf')), 'caf\uFFFD'],
  [
    'a Latin-1 directory moved in holding .env',
    (r) => {
      const stage = join(r, '..', `stage-${process.pid}`);
      mkdirSync(stage);
      writeFileSync(join(stage, '.env'), '');
      renameSync(stage, latin1(r, 'proj'));
    },
    'proj\uFFFD',
  ],
  [
    'a directory moved in holding a Latin-1 directory holding .env',
    (r) => {
      const stage = join(r, '..', `stage-${process.pid}`);
      mkdirSync(stage);
      mkdirSync(latin1(stage, 'caf'));
      writeFileSync(Buffer.concat([latin1(stage, 'caf'), Buffer.from('/.env')]), '');
      renameSync(stage, join(r, 'proj'));
    },
    'proj/caf\uFFFD',
  ],
  ['a Latin-1 file nothing denies', (r) => writeFileSync(latin1(r, 'notes'), ''), undefined],
  ['a Latin-1 link', (r) => symlinkSync('/etc', latin1(r, 'link')), undefined],
];

for (const [what, make, reported] of ROWS) {
  void t.test(what, async (t) => {
    const { r, reports, quietNow } = await watchedRoot(t);
    make(r);
    await quietNow();
    t.same(
      reports.filter((d) => !isSentinel(d.path)).map((d) => d.path),
      reported === undefined ? [] : [join(r, reported)],
      reported === undefined ? 'nothing reported' : `${reported} reported`,
    );
  });
}
