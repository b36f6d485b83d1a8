/**
 * The broken-policy corpus through the loader and `rootsctl validate`: every file exits 1 with
 * its position; loader-level mistakes (variables, includes, cycles) have exact positions here.
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import t from 'tap';
import { parsePolicyText } from '../../policies/parse.js';
import { rootsctl } from '../helpers/cli.js';
import { FIXTURES } from '../helpers/repo.js';

const fixtures = FIXTURES;
const loader = join(fixtures, 'loader');
const broken = join(fixtures, 'broken');
const env = { HOME: '/nonexistent-home', XDG_STATE_HOME: '/nonexistent-state' };

/** Loader-level mistakes: [file, kind, position (file:line:col), message]. */
const LOADER: [string, 'error' | 'warning', string, string][] = [
  [
    'unset-var.yaml',
    'error',
    'unset-var.yaml:5:15',
    "${MCP_ROOTS_TEST_UNSET}: environment variable MCP_ROOTS_TEST_UNSET is not set (set it in the daemon's environment, e.g. `systemctl --user set-environment MCP_ROOTS_TEST_UNSET=...`, or write the path out)",
  ],
  [
    'deny-unset-var.yaml',
    'error',
    'deny-unset-var.yaml:3:5',
    "$MCP_ROOTS_TEST_UNSET: environment variable MCP_ROOTS_TEST_UNSET is not set (set it in the daemon's environment, e.g. `systemctl --user set-environment MCP_ROOTS_TEST_UNSET=...`, or write the path out)",
  ],
  [
    'bad-var-name.yaml',
    'error',
    'bad-var-name.yaml:5:15',
    '${1X}: not a valid variable name (write ${NAME} with letters, digits and _)',
  ],
  [
    'tilde-user.yaml',
    'error',
    'tilde-user.yaml:5:15',
    '"~bob/src": ~user is not supported; write the full path',
  ],
  [
    'missing-include.yaml',
    'error',
    'missing-include.yaml:3:5',
    `include: included file ${loader}/nope.yaml does not exist (create it, or remove it from include)`,
  ],
  [
    'include-broken.yaml',
    'error',
    '../broken/unknown-key-rots.yaml:4:5',
    'servers.filesystem.rots: unknown key (did you mean "roots"?)',
  ],
  [
    'include-unset-var.yaml',
    'error',
    'include-unset-var.yaml:3:5',
    "include: $MCP_ROOTS_TEST_UNSET: environment variable MCP_ROOTS_TEST_UNSET is not set (set it in the daemon's environment, e.g. `systemctl --user set-environment MCP_ROOTS_TEST_UNSET=...`, or write the path out)",
  ],
  [
    'include-directory.yaml',
    'error',
    'include-directory.yaml:3:5',
    `include: ${loader} is a directory, not a policy file`,
  ],
  [
    'cycle-a.yaml',
    'warning',
    'cycle-b.yaml:2:11',
    `include cycle: ${loader}/cycle-a.yaml -> ${loader}/cycle-b.yaml -> ${loader}/cycle-a.yaml (the file is loaded once)`,
  ],
];

void t.test('loader-level mistakes: exact positions through rootsctl validate', async (t) => {
  t.same(
    readdirSync(loader).sort(),
    [...LOADER.map(([f]) => f), 'cycle-b.yaml'].sort(),
    'every loader fixture has a row',
  );
  for (const [file, kind, pos, message] of LOADER) {
    const r = await rootsctl(['validate', join(loader, file)], { env });
    const line = `${kind}: ${resolve(loader, pos.split(':')[0]!)}:${pos.split(':').slice(1).join(':')}: ${message}`;
    t.equal(r.code, kind === 'error' ? 1 : 0, `${file}: exit code`);
    t.equal(r.out.split('\n')[0], line, `${file}: first line`);
  }
});

void t.test(
  'every broken file: rootsctl validate exits 1 and prints the parser’s first error',
  async (t) => {
    const files = readdirSync(broken).filter((f) => f.endsWith('.yaml'));
    t.ok(files.length >= 25, `${files.length} broken files`);
    for (const f of files) {
      const path = join(broken, f);
      const r = await rootsctl(['validate', path], { env });
      t.equal(r.code, 1, `${f}: exit 1`);
      const { readFileSync } = await import('node:fs');
      const first = parsePolicyText(readFileSync(path), path).errors[0]!;
      t.equal(
        r.out.split('\n')[0],
        `error: ${path}:${first.line}:${first.column}: ${first.message}`,
        f,
      );
    }
  },
);
