/**
 * A policy the schema refuses still has its later problems reported, at once: what the schema
 * accepted of it is expanded, its includes loaded and its roots resolved for errors and warnings
 * only, never served.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parsePolicyText } from '../../policies/parse.js';
import { contextFor, evaluate, PARSED_FILE } from '../helpers/policy.js';

/** `line:column message` of each problem, for comparing. */
function at(list: { line: number; column: number; message: string }[]): string[] {
  return list.map((e) => `${e.line}:${e.column} ${e.message}`);
}

void t.test('what the schema accepts of a refused file keeps its places in the file', (t) => {
  const text = [
    'version: 1', //                                    1
    'include: [a.yaml, 42, b.yaml]', //                  2
    'deny:', //                                         3
    '  - ~/.ssh', //                                    4
    '  - {path: ~/.aws, acess: write}', //              5
    '  - ~/.gnupg', //                                  6
    'servers:', //                                      7
    '  fs:', //                                         8
    '    roots:', //                                    9
    '      - path: /srv/a', //                         10
    '        readonly: true', //                       11
    '      - {path: 7}', //                            12
    '      - path: /srv/c', //                         13
    '        expires: tomorrow', //                    14
    '      - path: /srv/d', //                         15
    '    sandbox: {read: [/x, 5]}', //                 16
    '  git:', //                                       17
    '    roots: yes', //                               18
  ].join('\n');
  const parsed = parsePolicyText(text, PARSED_FILE);
  t.equal(parsed.policy, undefined, 'a refused file has no policy');
  t.ok(parsed.errors.length >= 6, 'every refusal is an error');
  const s = parsed.salvaged;
  if (!s) {
    t.fail('a file with parts the schema accepts is salvaged');
    t.end();
    return;
  }
  t.same(
    s.include.map((i) => [i.pattern, i.pos.line, i.pos.column]),
    [
      ['a.yaml', 2, 11],
      ['b.yaml', 2, 23],
    ],
    'the include refused leaves a hole; the one after it keeps its place',
  );
  t.same(
    s.deny.map((d) => [d.path, d.pos.line]),
    [
      ['~/.ssh', 4],
      ['~/.aws', 5],
      ['~/.gnupg', 6],
    ],
    'a deny loses its unknown key only',
  );
  const fs = s.servers.find((b) => b.pattern === 'fs');
  t.same(
    fs?.roots.map((r) => [r.path, r.pathPos.line, r.readOnly, r.expires]),
    [
      ['/srv/a', 10, undefined, undefined],
      ['/srv/c', 13, undefined, undefined],
      ['/srv/d', 15, undefined, undefined],
    ],
    'an unknown key goes alone, a bad value takes its key, a root without a path goes',
  );
  t.same(fs?.sandbox?.read, [], 'a bad item of another list takes the list (its key) with it');
  t.same(
    s.servers.find((b) => b.pattern === 'git')?.roots,
    [],
    'a server whose roots are refused has none',
  );
  t.end();
});

void t.test('a file refused as a whole is not salvaged', (t) => {
  for (const text of [
    'version: 2\nservers: {fs: {roots: [{path: /a}]}}\n',
    '- version: 1\n',
    'servers: {fs: {roots: [{path: /a}]}}\n',
  ]) {
    const parsed = parsePolicyText(text, PARSED_FILE);
    t.ok(parsed.errors.length > 0, text);
    t.equal(parsed.salvaged, undefined, text);
  }
  // More errors than a file reports: the report says to fix those first, and nothing is salvaged.
  const many = Array.from({ length: 101 }, (_, i) => `      - {path: /a/${i}, readonly: true}`);
  const parsed = parsePolicyText(
    ['version: 1', 'servers:', '  fs:', '    roots:', ...many].join('\n'),
    PARSED_FILE,
  );
  t.match(parsed.errors.at(-1)?.message, /^1 more error not shown/);
  t.equal(parsed.salvaged, undefined, 'past the errors reported');
  t.end();
});

void t.test(
  'an invalid policy reports the errors and warnings a fix would bring next, and serves nothing',
  async (t) => {
    const dir = t.testdir();
    mkdirSync(join(dir, 'home/here'), { recursive: true });
    writeFileSync(
      join(dir, 'more.yaml'),
      'version: 1\nservers:\n  other:\n    roots:\n      - path: $ALSO_UNSET/y\n',
    );
    const ev = await evaluate(
      dir,
      [
        'version: 1', //                                     1
        'include: [more.yaml]', //                           2
        'servers:', //                                       3
        '  fs:', //                                          4
        '    roots:', //                                     5
        '      - path: ~/here', //                           6
        '        readonly: true', //                         7
        '      - path: $NOPE_VAR/x', //                      8
        '      - path: ~/gone', //                           9
        '      - path: ~/here', //                          10
        '        expires: 2020-01-01T00:00:00Z', //          11
        '      - path: ~/here', //                          12
        '        expire: 2020-01-01T00:00:00Z', //           13
      ].join('\n'),
      contextFor(dir, { env: {} }),
    );
    t.same(
      at(ev.errors).map((e) => e.replace(/ \(.*/, '')),
      [
        '7:9 servers.fs.roots[0].readonly: unknown key',
        '13:9 servers.fs.roots[4].expire: unknown key',
        '8:15 $NOPE_VAR: environment variable NOPE_VAR is not set',
        '5:15 $ALSO_UNSET: environment variable ALSO_UNSET is not set',
      ],
      "the schema's errors, the salvage's unset variable, and the include's",
    );
    t.equal(ev.errors[3]?.file, join(dir, 'more.yaml'), 'the include was loaded and checked');
    const warnings = at(ev.warnings).join('\n');
    t.match(warnings, /^9:\d+ ~\/gone: .*does not exist/m, 'the missing root is warned of');
    t.match(warnings, /^10:\d+ .*expired at 2020-01-01T00:00:00\.000Z/m, 'the expired one too');
    t.same(ev.resolved.roots('fs'), [], 'nothing of an invalid policy is served');
    t.same(ev.sources.files.length, 1, 'only the valid include counts as a file of the policy');
    t.same(ev.sources.salvaged.length, 1);
  },
);
