/**
 * docs/policy.md "Symlinks": a link a glob matches must lead to what the glob itself grants, and
 * a link never yields `/` or the home. How each row runs is in test/helpers/symlink-rows.ts.
 */
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { link, runRows, type Row } from '../helpers/symlink-rows.js';

/** Matched links (class: a link a glob matches must lead to what the glob itself grants). */
const MATCHED: Row[] = [
  ['evil/docs -> .. (the base itself)', '..'],
  ['evil/docs -> ../.. (above the base)', '../..'],
  ['evil/docs -> ../other (a repository, not a docs directory)', '../other'],
  ['evil/docs -> ../.hidden/docs (a dot directory * skips)', '../.hidden/docs'],
  ['evil/docs -> / ', '/'],
  ['evil/docs -> the home', 'HOME'],
  ['evil/docs -> . (itself: the repository)', '.'],
].map(([name, target]): Row => ({
  name: `${name}: dropped`,
  tree: ['home/', 'repos/good/docs/f', 'repos/other/f', 'repos/.hidden/docs/f', 'repos/evil/'],
  later: (d) =>
    symlinkSync(target === 'HOME' ? join(d, 'home') : target!, join(d, 'repos/evil/docs')),
  entries: ['repos/*/docs'],
  loaded: ['repos/good/docs'],
  after: ['repos/good/docs'],
  warns: /evil\/docs is a symlink that leads outside what the glob matches/,
  refused: ['repos/other/f', 'repos/.hidden/docs/f', 'repos/evil/docs/f', 'home/f'],
}));
MATCHED.push(
  {
    name: 'evil/docs -> ../other/docs (granted by the glob anyway): kept',
    tree: ['home/', 'repos/good/docs/f', 'repos/other/docs/sub/f', 'repos/evil/'],
    later: (d) => symlinkSync('../other/docs', join(d, 'repos/evil/docs')),
    entries: ['repos/*/docs'],
    loaded: ['repos/good/docs', 'repos/other/docs'],
    after: ['repos/good/docs', 'repos/other/docs'],
  },
  {
    // Granted by the glob, but `sub` lies below what the daemon watches for `repos/*/docs`:
    // renamed or replaced by a link there, the daemon would go on granting it unseen
    // (policies/link-way.ts).
    name: 'evil/docs -> ../other/docs/sub (deeper than the glob is watched): dropped',
    tree: ['home/', 'repos/good/docs/f', 'repos/other/docs/sub/f', 'repos/evil/'],
    later: (d) => symlinkSync('../other/docs/sub', join(d, 'repos/evil/docs')),
    entries: ['repos/*/docs'],
    loaded: ['repos/good/docs', 'repos/other/docs'],
    after: ['repos/good/docs', 'repos/other/docs'],
    warns: /evil\/docs is a symlink that leads through a path outside what the daemon watches/,
  },
  {
    name: '** glob: a/docs -> ../.. dropped, b/docs -> ../c/docs kept',
    tree: ['home/', 'repos/a/', 'repos/b/', 'repos/c/docs/f', 'repos/x/y/docs/'],
    later: (d) => {
      symlinkSync('../..', join(d, 'repos/a/docs'));
      symlinkSync('../c/docs', join(d, 'repos/b/docs'));
    },
    entries: ['repos/**/docs'],
    loaded: ['repos/c/docs', 'repos/x/y/docs'],
    after: ['repos/c/docs', 'repos/x/y/docs'],
    warns: /a\/docs is a symlink that leads outside/,
    refused: ['repos/a/docs/c/docs/f'],
  },
  {
    name: 'repos/* with a link to its own base: dropped; to a sibling: kept',
    tree: ['home/', 'repos/good/f'],
    later: (d) => {
      symlinkSync('.', join(d, 'repos/self'));
      symlinkSync('good', join(d, 'repos/alias'));
    },
    entries: ['repos/*'],
    loaded: ['repos/good'],
    after: ['repos/good'],
    warns: /self is a symlink that leads outside/,
    refused: ['repos/self/good/../f'],
  },
);

/** A link never yields `/`, the home or an ancestor of it; writing those paths does. */
const TOP: Row[] = [
  {
    name: 'glob base that is a link to / at load: nothing, not every top-level directory',
    tree: ['home/'],
    atLoad: (d) => link(d, '/', 'sys'),
    entries: ['sys/*'],
    loaded: [],
    warns: /sys leads through a symlink to \/;/,
    refused: ['/etc/hostname', 'sys/etc/hostname'],
  },
  {
    name: 'root that is a link to the home at load: nothing',
    tree: ['home/f'],
    atLoad: (d) => link(d, 'home', 'h'),
    entries: ['h'],
    loaded: [],
    warns: /leads through a symlink to .*home; a link never yields/,
    refused: ['home/f', 'h/f'],
  },
  {
    name: 'glob base that is a link to an ancestor of the home: nothing',
    tree: ['home/f'],
    atLoad: (d) => link(d, '.', 'up'),
    entries: ['up/*'],
    loaded: [],
    refused: ['home/f'],
  },
  {
    name: 'the home written as a path: listed',
    tree: ['home/f'],
    entries: ['home'],
    loaded: ['home'],
  },
];

await runRows('links a glob matches', MATCHED);
await runRows('links to / or the home', TOP);
