/**
 * Watches set before the first walk (policies/watch-first.ts) follow links as they are when set,
 * without the daemon's pins. An attacker who swaps a folder for a link between the watch and the
 * walk (to outside the granted base, to a denied directory), repoints a link afterwards, or fills
 * the link's target, must not get a list that names what the policy denies or what resolves
 * outside the base: not in any list the daemon computes on the way, and at the end the lists
 * are those of a fresh resolution. Real directories, links, watches; the swaps are made once
 * the watches are set, before the walk begins.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { PolicyState } from '../../daemon/state.js';
import { nodeFs } from '../../policies/index.js';
import { shortDir } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';
import { startWatchedState } from '../helpers/watch-state.js';

type Teardown = { teardown(fn: () => unknown): void };

/**
 * The state and watcher as the daemon makes them, watches first: `between` runs at the moment an
 * attacker aims for, the watches set and the walk not begun (at the start, then at each reload).
 */
function start(
  t: Teardown,
  dir: string,
  hooks: { between?: (() => void)[]; seen?: (s: PolicyState) => void } = {},
): Promise<PolicyState> {
  return startWatchedState(t, dir, nodeFs(), hooks);
}

const SERVERS = ['star', 'tree', 'lit', 'deny', 'late'];

function lists(state: PolicyState): string[][] {
  return SERVERS.map((s) => state.roots(s).map((r) => decodeURIComponent(r.uri)));
}

void t.test('links swapped in before the first walk never list outside or denied', async (t) => {
  const dir = shortDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const w = join(dir, 'w');
  const outside = join(dir, 'outside');
  const denied = join(w, 'denied');
  for (const d of [
    'w/star/d1',
    'w/star/d2',
    'w/star/d3',
    'w/tree/sub/inner',
    'w/tree/keep',
    'w/lit',
    'w/deny/d1',
    'w/deny/d2',
    'w/denied/x',
    'w/late/d1',
    'w/late/d2',
    'outside/o1',
    'run',
    'home',
  ]) {
    mkdirSync(join(dir, d), { recursive: true });
  }
  const policy = `version: 1
deny:
  - ${denied}
servers:
  star:
    roots: [{ path: ${w}/star/* }]
  tree:
    roots: [{ path: ${w}/tree/** }]
  lit:
    roots: [{ path: ${w}/lit }]
  deny:
    roots: [{ path: ${w}/deny/* }, { path: ${w}/denied/* }]
`;
  writeFileSync(join(dir, 'mcp-roots.yaml'), policy);
  /** Replace folder `p` with a link to `target`. */
  const swap = (p: string, target: string) => () => {
    renameSync(p, `${p}.old`);
    symlinkSync(target, p);
  };
  const swaps = [
    // matches of `*` become a link out of the base and a link into a denied directory
    swap(join(w, 'star/d1'), outside),
    swap(join(w, 'star/d2'), denied),
    // a folder inside a `**` base becomes a link out of it (its watch may follow it)
    swap(join(w, 'tree/sub'), outside),
    // a literal root becomes a link to a denied directory
    swap(join(w, 'lit'), denied),
    // a match becomes a link into a denied directory that another root's glob also names
    swap(join(w, 'deny/d1'), join(denied, 'x')),
  ];
  let swapped = false;
  const forbidden = (uri: string) =>
    uri.includes(outside) || uri.includes(denied) || uri.endsWith('/lit');
  const bad: string[] = [];
  let reloadSwapped = false;
  const state = await start(t, dir, {
    between: [
      () => {
        for (const s of swaps) s();
        swapped = true;
      },
      // the reload that adds server `late`: its match swapped for a link out of its base
      () => {
        swap(join(w, 'late/d1'), outside)();
        reloadSwapped = true;
      },
    ],
    seen: (s) => {
      for (const l of lists(s)) for (const uri of l) if (forbidden(uri)) bad.push(uri);
    },
  });
  t.ok(swapped, 'the swaps were made between the watches and the walk');

  // After the start: fill the links' targets (a watch that followed a link reports these),
  // repoint an inside link outside, and make a sentinel to know the daemon has caught up.
  mkdirSync(join(outside, 'o2'));
  mkdirSync(join(denied, 'y'));
  symlinkSync(join(w, 'star/d3'), join(w, 'star/l'));
  const caughtUp = async (name: string) => {
    mkdirSync(join(w, 'tree/keep', name));
    await waitFor(
      () => lists(state)[1]!.some((u) => u.endsWith(`/${name}`)),
      60_000,
      `${name} to be listed`,
    );
  };
  await caughtUp('sentinel1');
  // A link the daemon has followed inside the base, pointed out of it.
  unlinkSync(join(w, 'star/l'));
  symlinkSync(join(outside, 'o1'), join(w, 'star/l'));
  mkdirSync(join(outside, 'o1', 'deeper'));
  await caughtUp('sentinel2');
  // A reload: a new server whose root's folder is swapped between its watches and its walk.
  writeFileSync(
    join(dir, 'mcp-roots.yaml'),
    `${policy}  late:\n    roots: [{ path: ${w}/late/* }]\n`,
  );
  await waitFor(() => reloadSwapped && lists(state)[4]!.length > 0, 60_000, 'the reload');
  mkdirSync(join(outside, 'o3'));
  await caughtUp('sentinel3');
  for (const l of lists(state)) for (const uri of l) if (forbidden(uri)) bad.push(uri);
  t.same(bad, [], 'no list named what lies outside the base or is denied');

  const fresh = await start(t, dir);
  t.same(lists(state), lists(fresh), 'the lists are a fresh resolution’s');
  t.same(lists(fresh)[2], [], 'the literal root swapped for a denied directory lists nothing');
});
