import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import t from 'tap';
import { makeLogger } from '../../daemon/logger.js';
import { PolicyState } from '../../daemon/state.js';
import { nodeFs } from '../../policies/index.js';

/** A real filesystem whose readdir of one directory waits until the test opens the gate. */
function gatedFs(gated: string) {
  const fs = nodeFs();
  let open: () => void = () => undefined;
  let gate: Promise<void> = Promise.resolve();
  let entered: () => void = () => undefined;
  return {
    fs: {
      ...fs,
      readdir: async (p: string) => {
        if (p === gated) {
          entered();
          await gate;
        }
        return fs.readdir(p);
      },
    },
    /** Close the gate; resolves once a resolution is held at it. */
    close(): { held: Promise<void>; open: () => void } {
      gate = new Promise<void>((r) => (open = r));
      const held = new Promise<void>((r) => (entered = r));
      return { held, open: () => open() };
    },
  };
}

void t.test('answers come from the last snapshot while a background recompute runs', async (t) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mr-snap-')));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const tree = join(dir, 'tree');
  mkdirSync(join(dir, 'a'), { recursive: true });
  mkdirSync(join(tree, 'one'), { recursive: true });
  const config = join(dir, 'mcp-roots.yaml');
  writeFileSync(
    config,
    `version: 1\nservers:\n  a:\n    roots:\n      - path: ${dir}/a\n  b:\n    roots:\n      - path: ${tree}/*\n`,
  );
  const g = gatedFs(tree);
  const state = new PolicyState({
    configFile: config,
    grantsFile: join(dir, 'state', 'grants.yaml'),
    stateDir: join(dir, 'state'),
    runtimeDir: join(dir, 'run'),
    home: join(dir, 'home'),
    env: {},
    fs: g.fs,
    log: makeLogger({ level: 'error', stream: new Writable({ write: (_c, _e, done) => done() }) }),
  });
  t.teardown(() => state.close());
  await state.start();
  t.equal(state.roots('b').length, 1);

  const gate = g.close();
  mkdirSync(join(tree, 'two'));
  const background = state.recompute('directories changed', true);
  await gate.held;
  // Held mid-resolution: every kind of answer is still given, from the snapshot in force.
  const cases: [string, () => Promise<unknown>][] = [
    ['check for another server', () => state.check('a', join(dir, 'a', 'f.txt'), 'write')],
    ['check for the churning server', () => state.check('b', join(tree, 'one', 'f'), 'read')],
    ['fresh (what list, subscribe and explain wait for)', () => state.fresh()],
  ];
  for (const [name, ask] of cases) await t.resolves(ask(), name);
  t.equal((await state.check('a', join(dir, 'a', 'f.txt'), 'write')).allowed, true);
  t.equal(state.roots('b').length, 1, 'the old snapshot serves until the new one is complete');
  gate.open();
  await background;
  t.equal(state.roots('b').length, 2, 'then the new snapshot replaces it whole');
});
