/**
 * The daemon parses an edited policy during its settle window and keeps the parse for the reload
 * at its end (policies/load.ts `prepareParse`). An attacker who can time edits wants that reload
 * to serve a parse of what the file held a moment ago: a wider policy, a valid one after an
 * invalid edit. Each row keeps a parse of other bytes waiting (a wide policy, an invalid one),
 * as the daemon's own settle-window parse leaves one, on every turn of the event loop, while it
 * changes the file the ways editors and attackers do (same size and mtime, renamed over, a link
 * swapped, an included file); the real daemon must serve what the file holds when it reloads,
 * and keep the last good policy after an invalid edit. No list it sends may ever name the wide root.
 */
import {
  mkdirSync,
  renameSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { prepareParse } from '../../policies/index.js';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

const SIZE = 200;

/** A policy of exactly SIZE bytes (padded with a comment), serving `root` to `fs`. */
function policyOf(root: string, extra = ''): string {
  const text = `version: 1\nservers:\n  fs:\n    roots: [{ path: ${root} }]\n${extra}`;
  if (text.length > SIZE - 3) throw new Error('policy too long for the fixture');
  return `${text}#${'x'.repeat(SIZE - text.length - 2)}\n`;
}

/** Invalid (roots must be a list), of the same size. */
const INVALID = (() => {
  const text = 'version: 1\nservers:\n  fs:\n    roots: 7\n';
  return `${text}#${'x'.repeat(SIZE - text.length - 2)}\n`;
})();

interface Row {
  what: string;
  /** Set up the files before the daemon starts; returns the file the daemon reads. */
  setup: (dir: string, p: Paths) => string;
  /** The bytes a parse is left waiting for (as if read during the settle window). */
  prepared: (p: Paths) => string;
  /** The edit, after the prepared parse. */
  edit: (dir: string, p: Paths) => void;
  /** What the daemon must serve at the end: 'b', or 'a' (the last good) with errors. */
  serves: 'a' | 'b';
}

interface Paths {
  a: string;
  b: string;
  wide: string;
  config: string;
}

/** Write `text` to `file` keeping its size and mtime, as an edit within one clock tick may. */
function sameStat(file: string, text: string): void {
  const before = statSync(file);
  writeFileSync(file, text);
  utimesSync(file, before.atime, before.mtime);
}

const ROWS: Row[] = [
  {
    what: 'same size and mtime, after a wide parse',
    setup: (_d, p) => (writeFileSync(p.config, policyOf(p.a)), p.config),
    prepared: (p) => policyOf(p.wide),
    edit: (_d, p) => sameStat(p.config, policyOf(p.b)),
    serves: 'b',
  },
  {
    what: 'an editor renames the new file over it',
    setup: (_d, p) => (writeFileSync(p.config, policyOf(p.a)), p.config),
    prepared: (p) => policyOf(p.wide),
    edit: (dir, p) => {
      writeFileSync(join(dir, '.mcp-roots.yaml.swp'), policyOf(p.b));
      renameSync(join(dir, '.mcp-roots.yaml.swp'), p.config);
    },
    serves: 'b',
  },
  {
    what: 'the policy is a link, swapped to another file',
    setup: (dir, p) => {
      writeFileSync(join(dir, 'one.yaml'), policyOf(p.a));
      writeFileSync(join(dir, 'two.yaml'), policyOf(p.b));
      symlinkSync(join(dir, 'one.yaml'), p.config);
      return p.config;
    },
    prepared: (p) => policyOf(p.wide),
    edit: (dir, p) => {
      symlinkSync(join(dir, 'two.yaml'), `${p.config}.new`);
      renameSync(`${p.config}.new`, p.config);
    },
    serves: 'b',
  },
  {
    what: 'an included file, same size and mtime',
    setup: (dir, p) => {
      writeFileSync(p.config, `version: 1\ninclude: [${join(dir, 'inc.yaml')}]\n`);
      writeFileSync(join(dir, 'inc.yaml'), policyOf(p.a));
      return join(dir, 'inc.yaml');
    },
    prepared: (p) => policyOf(p.wide),
    edit: (dir, p) => sameStat(join(dir, 'inc.yaml'), policyOf(p.b)),
    serves: 'b',
  },
  {
    what: 'an invalid edit after a valid wide parse',
    setup: (_d, p) => (writeFileSync(p.config, policyOf(p.a)), p.config),
    prepared: (p) => policyOf(p.wide),
    edit: (_d, p) => sameStat(p.config, INVALID),
    serves: 'a',
  },
  {
    what: 'a valid edit after an invalid parse',
    setup: (_d, p) => (writeFileSync(p.config, policyOf(p.a)), p.config),
    prepared: () => INVALID,
    edit: (_d, p) => sameStat(p.config, policyOf(p.b)),
    serves: 'b',
  },
  {
    what: 'the policy removed, then back with other bytes',
    setup: (_d, p) => (writeFileSync(p.config, policyOf(p.a)), p.config),
    prepared: (p) => policyOf(p.wide),
    edit: (_d, p) => {
      unlinkSync(p.config);
      writeFileSync(p.config, policyOf(p.b));
    },
    serves: 'b',
  },
];

void t.test(
  'a parse kept from the settle window never outlives the bytes it was made of',
  async (t) => {
    for (const row of ROWS) {
      await t.test(row.what, async (t) => {
        const dir = ownedShortDir(t);
        const w = join(dir, 'w');
        const p: Paths = {
          a: join(w, 'a'),
          b: join(w, 'b'),
          wide: w,
          config: join(dir, 'mcp-roots.yaml'),
        };
        for (const d of [p.a, p.b, join(dir, 'home')]) mkdirSync(d, { recursive: true });
        const file = row.setup(dir, p);
        const d = await startDaemon(t, undefined, { dir });
        const c = await d.connect();
        const uris = async () =>
          (await c.listRoots('fs')).roots.map((r) => decodeURIComponent(r.uri));
        const seen: string[][] = [];
        c.on('list_changed', (params) =>
          seen.push(params.roots.map((r) => decodeURIComponent(r.uri))),
        );
        await c.subscribe('fs');
        t.same(await uris(), [`file://${p.a}`], 'serves a at the start');

        // Left waiting again on every turn of the event loop: whenever the daemon's own
        // settle-window parse lands, the reload still finds the other bytes' parse.
        const stale = Buffer.from(row.prepared(p));
        let injecting = true;
        const inject = () => {
          if (!injecting) return;
          prepareParse(file, stale);
          setImmediate(inject);
        };
        inject();
        t.teardown(() => {
          injecting = false;
        });
        row.edit(dir, p);
        if (row.serves === 'b') {
          await waitFor(async () => (await uris())[0] === `file://${p.b}`, 30_000, 'b served');
          t.equal((await c.status()).policy.errors.length, 0, 'no errors');
        } else {
          await waitFor(
            async () => (await c.status()).policy.errors.length > 0,
            30_000,
            'the invalid edit reported',
          );
          t.same(await uris(), [`file://${p.a}`], 'the last good policy keeps serving');
        }
        injecting = false;
        const wide = seen.filter((l) => l.includes(`file://${p.wide}`));
        t.same(wide, [], 'no list named the wide root');
      });
    }
  },
);
