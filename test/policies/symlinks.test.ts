/**
 * docs/policy.md "Symlinks": every cell of the table of link kinds x times (the rules for links a
 * glob matches and for links to / or the home are in symlinks-globs.test.ts). How each row runs
 * is in test/helpers/symlink-rows.ts.
 */
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { makeTree } from '../helpers/policy.js';
import { BASE, link, replaceWithLink, runRows, type Row } from '../helpers/symlink-rows.js';

/** Rows: link kind (plain root, its ancestor, glob base, its ancestor) x time. */
const TIMES: Row[] = [
  // the root itself is a link
  {
    name: 'root is a link present at load: followed',
    tree: BASE,
    atLoad: (d) => link(d, 'elsewhere/shared', 'work/shared'),
    entries: ['work/shared'],
    loaded: ['elsewhere/shared'],
    after: ['elsewhere/shared'],
  },
  {
    name: 'root was a real directory, replaced by a link later: not followed',
    tree: [...BASE, 'work/shared/f'],
    later: (d) => replaceWithLink(d, 'other', 'work/shared'),
    entries: ['work/shared'],
    loaded: ['work/shared'],
    after: [],
    reloaded: ['other'],
    warns: /work\/shared now leads to .*other.*not followed/,
    refused: ['work/shared/o/f', 'other/o/f'],
  },
  {
    name: 'root was missing at load, created later as a link: not followed',
    tree: BASE,
    later: (d) => link(d, 'other', 'work/shared'),
    entries: ['work/shared'],
    loaded: [],
    after: [],
    reloaded: ['other'],
    warns: /not followed/,
    refused: ['work/shared/o/f'],
  },
  {
    name: 'root was missing at load, created later as a directory: listed (control)',
    tree: BASE,
    later: (d) => mkdirSync(join(d, 'work/shared')),
    entries: ['work/shared'],
    loaded: [],
    after: ['work/shared'],
  },
  {
    name: 'root is a link present at load, re-pointed later: not followed',
    tree: BASE,
    atLoad: (d) => link(d, 'elsewhere/shared', 'work/shared'),
    later: (d) => {
      rmSync(join(d, 'work/shared'));
      link(d, 'other', 'work/shared');
    },
    entries: ['work/shared'],
    loaded: ['elsewhere/shared'],
    after: [],
    reloaded: ['other'],
    warns: /now leads to .*other, not .*elsewhere\/shared/,
    refused: ['work/shared/o/f', 'other/o/f'],
  },
  {
    name: 'root is a dangling link at load that later gains a target: followed where pinned',
    tree: BASE,
    atLoad: (d) => link(d, 'elsewhere/later', 'work/shared'),
    later: (d) => mkdirSync(join(d, 'elsewhere/later')),
    entries: ['work/shared'],
    loaded: [],
    after: ['elsewhere/later'],
  },
  // an ancestor of the root is a link
  {
    name: 'ancestor of a root is a link present at load: followed',
    tree: [...BASE, 'real-work/shared/f'],
    atLoad: (d) => {
      rmSync(join(d, 'work'), { recursive: true });
      link(d, 'real-work', 'work');
    },
    entries: ['work/shared'],
    loaded: ['real-work/shared'],
    after: ['real-work/shared'],
  },
  {
    name: 'ancestor of a root replaced by a link later: not followed',
    tree: [...BASE, 'work/shared/f', 'evil/shared/f'],
    later: (d) => replaceWithLink(d, 'evil', 'work'),
    entries: ['work/shared'],
    loaded: ['work/shared'],
    after: [],
    reloaded: ['evil/shared'],
    warns: /now leads to .*evil\/shared/,
    refused: ['work/shared/f', 'evil/shared/f'],
  },
  {
    name: 'ancestor of a missing root created later as a link: not followed',
    tree: [...BASE, 'evil/shared/f'],
    later: (d) => link(d, 'evil', 'work/deep'),
    entries: ['work/deep/shared'],
    loaded: [],
    after: [],
    reloaded: ['evil/shared'],
    refused: ['work/deep/shared/f'],
  },
  {
    name: 'ancestor link present at load, re-pointed later: not followed',
    tree: [...BASE, 'a/shared/f', 'b/shared/f'],
    atLoad: (d) => link(d, 'a', 'work/cur'),
    later: (d) => {
      rmSync(join(d, 'work/cur'));
      link(d, 'b', 'work/cur');
    },
    entries: ['work/cur/shared'],
    loaded: ['a/shared'],
    after: [],
    reloaded: ['b/shared'],
    refused: ['work/cur/shared/f', 'b/shared/f'],
  },
  // the glob base is a link
  {
    name: 'glob base is a link present at load: followed',
    tree: BASE,
    atLoad: (d) => link(d, 'elsewhere/mirrors', 'work/mirrors'),
    entries: ['work/mirrors/*'],
    loaded: ['elsewhere/mirrors/m1'],
    after: ['elsewhere/mirrors/m1'],
  },
  {
    name: 'glob base was a real directory, replaced by a link later: not followed',
    tree: [...BASE, 'work/mirrors/m0/f'],
    later: (d) => replaceWithLink(d, 'other', 'work/mirrors'),
    entries: ['work/mirrors/*'],
    loaded: ['work/mirrors/m0'],
    after: [],
    reloaded: ['other/o'],
    warns: /work\/mirrors now leads to .*other.*not followed/,
    refused: ['work/mirrors/o/f', 'other/o/f'],
  },
  {
    name: 'glob base missing at load, created later as a link: not followed',
    tree: BASE,
    later: (d) => link(d, 'other', 'work/mirrors'),
    entries: ['work/mirrors/*'],
    loaded: [],
    after: [],
    reloaded: ['other/o'],
    refused: ['work/mirrors/o/f'],
  },
  {
    name: 'glob base missing at load, created later as a directory: matches (control)',
    tree: BASE,
    later: (d) => makeTree(d, ['work/mirrors/m2/']),
    entries: ['work/mirrors/*'],
    loaded: [],
    after: ['work/mirrors/m2'],
  },
  {
    name: 'glob base is a link present at load, re-pointed later: not followed',
    tree: BASE,
    atLoad: (d) => link(d, 'elsewhere/mirrors', 'work/mirrors'),
    later: (d) => {
      rmSync(join(d, 'work/mirrors'));
      link(d, 'other', 'work/mirrors');
    },
    entries: ['work/mirrors/*'],
    loaded: ['elsewhere/mirrors/m1'],
    after: [],
    reloaded: ['other/o'],
    refused: ['work/mirrors/o/f'],
  },
  {
    name: 'a link named like the glob itself, created later: not taken literally',
    tree: [...BASE, 'work/mirrors/m0/'],
    later: (d) => link(d, 'other', 'work/mirrors/*'),
    entries: ['work/mirrors/*'],
    loaded: ['work/mirrors/m0'],
    after: [],
    reloaded: ['other'],
    refused: ['work/mirrors/*/o/f', 'other/o/f'],
  },
  // an ancestor of the glob base is a link
  {
    name: 'ancestor of a glob base is a link present at load: followed',
    tree: [...BASE, 'real-work/mirrors/m1/'],
    atLoad: (d) => {
      rmSync(join(d, 'work'), { recursive: true });
      link(d, 'real-work', 'work');
    },
    entries: ['work/mirrors/*'],
    loaded: ['real-work/mirrors/m1'],
    after: ['real-work/mirrors/m1'],
  },
  {
    name: 'ancestor of a glob base replaced by a link later (a monorepo clone): not followed',
    tree: [...BASE, 'repos/app/packages/p1/', 'repos/app/secret/f'],
    later: (d) => {
      rmSync(join(d, 'repos/app'), { recursive: true });
      makeTree(d, ['repos/app/secret/f']);
      link(d, 'repos/app', 'repos/app/packages');
    },
    entries: ['repos/app/packages/*'],
    loaded: ['repos/app/packages/p1'],
    after: [],
    refused: ['repos/app/secret/f'],
  },
  {
    name: 'glob base that is a link up to its own parent at load (packages -> ..): not followed',
    tree: [...BASE, 'repos/app/secret/f'],
    atLoad: (d) => symlinkSync('..', join(d, 'repos/app/packages')),
    entries: ['repos/app/packages/*'],
    loaded: [],
    warns: /up to .*\/repos, which holds it/,
    refused: ['repos/app/secret/f', 'repos/app/packages/secret/f'],
  },
];

await runRows('symlinks on written paths: link kind x time', TIMES);
