/**
 * The parser on hostile and odd input: oversized files, big files (linear time), bytes that are
 * not UTF-8, alias bombs, odd values, many errors, and truncated or mangled policies.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { MAX_ERRORS, MAX_POLICY_BYTES, parsePolicyText } from '../../policies/parse.js';
import { firstError, PARSED_FILE as file } from '../helpers/policy.js';
import { REPO } from '../helpers/repo.js';

const repo = REPO;
const examplePath = join(repo, 'examples/mcp-roots.yaml');

void t.test('a file over 1 MiB is refused before parsing', (t) => {
  const dir = t.testdir({});
  const path = join(dir, 'big.yaml');
  const line = '      - path: ~/projects/some/quite/long/path/to/a/directory\n';
  const body = 'version: 1\nservers:\n  filesystem:\n    roots:\n';
  writeFileSync(path, body + line.repeat(Math.ceil((5 * MAX_POLICY_BYTES) / line.length)));
  const bytes = readFileSync(path);
  t.same(firstError(bytes, path), [
    '1:1',
    'file is 5.0 MiB; a policy file may be at most 1 MiB (split it with include)',
  ]);
  t.same(firstError(bytes.toString('utf8')), [
    '1:1',
    'file is 5.0 MiB; a policy file may be at most 1 MiB (split it with include)',
  ]);
  const justOver = Buffer.alloc(MAX_POLICY_BYTES + 1, 0x20);
  t.same(firstError(justOver), [
    '1:1',
    'file is 1048577 bytes; a policy file may be at most 1 MiB (split it with include)',
  ]);
  const atLimit = Buffer.from(`version: 1\n#${'x'.repeat(MAX_POLICY_BYTES - 12)}`);
  t.same(parsePolicyText(atLimit, file).errors, [], 'exactly 1 MiB is fine');
  t.end();
});

void t.test('big files stay linear: many servers, many bad entries', (t) => {
  const servers = Array.from({ length: 60000 }, (_, i) => `  s${i}: {}\n`).join('');
  const many = parsePolicyText(`version: 1\nservers:\n${servers}`, file);
  t.same(many.errors, []);
  t.equal(many.policy!.servers.length, 60000);
  t.equal(many.policy!.servers[59999]!.pos.line, 60002);

  const bad = parsePolicyText(`version: 1\ndeny:\n${'  - 1\n'.repeat(50000)}`, file);
  t.equal(bad.errors.length, MAX_ERRORS + 1);
  t.same(bad.errors[MAX_ERRORS], {
    file,
    line: 103,
    column: 5,
    message: '49900 more errors not shown; fix the ones above first',
  });

  const half = servers.slice(0, servers.indexOf('  s30000:'));
  const dups = parsePolicyText(`version: 1\nservers:\n${half}${half}`, file);
  t.equal(dups.errors.length, MAX_ERRORS + 1);
  t.same(dups.errors[0], {
    file,
    line: 30003,
    column: 3,
    message:
      'servers.s0: duplicate key; a key may appear only once in a mapping, so remove or merge one',
  });
  t.end();
});

void t.test('a file that is not UTF-8 points at the first bad byte', (t) => {
  const dir = t.testdir({});
  const path = join(dir, 'latin1.yaml');
  writeFileSync(
    path,
    Buffer.concat([
      Buffer.from('version: 1\nservers:\n  filesystem:\n    roots:\n      - path: ~/Caf\u00e9/'),
      Buffer.from([0x52, 0xe9, 0x73, 0x75, 0x6d, 0xe9, 0x0a]), // "Résumé" in Latin-1
    ]),
  );
  t.same(firstError(readFileSync(path), path), [
    '5:23',
    'not valid UTF-8 (byte 0xe9); save the file as UTF-8',
  ]);
  t.same(firstError(Buffer.from([0xef, 0xbb])), [
    '1:1',
    'not valid UTF-8 (byte 0xef); save the file as UTF-8',
  ]);
  t.same(firstError(Buffer.from([0x76, 0xed, 0xa0, 0x80])), [
    '1:2',
    'not valid UTF-8 (byte 0xed); save the file as UTF-8',
  ]);
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('version: 1\n')]);
  t.same(parsePolicyText(bom, file).errors, [], 'a byte order mark is fine');
  t.end();
});

void t.test('an alias bomb errors instead of expanding', (t) => {
  const levels = ['version: 1', 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < 30; i++) {
    const prev = `*a${i - 1}`;
    levels.push(`a${i}: &a${i} [${Array(9).fill(prev).join(', ')}]`);
  }
  const r = parsePolicyText(levels.join('\n'), file);
  t.equal(r.policy, undefined);
  t.equal(r.errors.length, 1);
  t.equal(r.errors[0]!.line, 3);
  t.end();
});

void t.test('odd inputs get plain answers', (t) => {
  const root = (entry: string) => `version: 1\nservers:\n  fs:\n    roots:\n      -${entry}\n`;
  t.same(firstError(root(' path: "a\\0b"')), [
    '5:15',
    'servers.fs.roots[0].path: must not contain a NUL character',
  ]);
  t.same(firstError(root('')), [
    '5:8',
    'servers.fs.roots[0]: is empty; fill it in or remove the "-" line',
  ]);
  t.same(firstError('version: 1\nservers:\n  : {roots: []}\n'), [
    '3:3',
    'servers[""]: a server name must not be empty',
  ]);
  t.same(firstError('version: 1\n__proto__: {x: 1}\n'), [
    '2:1',
    '__proto__: unknown key; the keys allowed here are version, include, defaults, ask, deny or servers',
  ]);
  t.equal(
    firstError(`version: 1\nx: ${'['.repeat(100000)}${']'.repeat(100000)}\n`)?.[1],
    'invalid YAML: nested too deeply; a policy needs a few levels',
  );

  const yaml11 = parsePolicyText('%YAML 1.1\n---\nversion: 1\ndefaults: {readOnly: yes}\n', file);
  t.same(
    yaml11.errors.map((e) => `${e.line}:${e.column}: ${e.message}`),
    ['4:22: defaults.readOnly: must be true or false, not "yes"'],
    'always YAML 1.2: yes is a string',
  );
  t.same(yaml11.warnings[0], {
    file,
    line: 1,
    column: 1,
    message:
      'read as YAML 1.2 whatever %YAML says: yes, no, on and off are strings (write true or false)',
  });

  const proto = parsePolicyText(
    'version: 1\nservers:\n  __proto__:\n    roots: [{path: a}]\n    tools: {__proto__: {readOnly: true}}\n',
    file,
  );
  t.same(proto.errors, []);
  const block = proto.policy!.servers[0]!;
  t.equal(block.pattern, '__proto__');
  t.equal(block.roots[0]!.path, 'a');
  t.ok(Object.hasOwn(block.tools, '__proto__'), 'a tool named __proto__ is an own key');
  t.same(parsePolicyText('\uFEFFversion: 1\r\nservers: {}\r\n', file).errors, [], 'BOM and CRLF');
  t.end();
});

void t.test('errors are sorted by position and all reported', (t) => {
  const r = parsePolicyText(
    [
      'version: 1',
      'servers:',
      '  b:',
      '    roots:',
      '      - path: ~/b',
      '        expires: soon',
      '  a:',
      '    readOnly: "no"',
      'defaults:',
      '  readonly: true',
    ].join('\n'),
    file,
  );
  t.same(
    r.errors.map((e) => `${e.line}:${e.column}: ${e.message}`),
    [
      '6:18: servers.b.roots[0].expires: "soon" is not an RFC 3339 date-time with a zone, e.g. 2026-12-31T18:00:00Z',
      '8:15: servers.a.readOnly: must be true or false, not "no"',
      '10:3: defaults.readonly: unknown key (did you mean "readOnly"?)',
    ],
  );
  t.end();
});

/** A small deterministic PRNG, so a failing case can be reproduced. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** Truncations, and as many mangled copies, of the example policy per run. */
const SAMPLES = 300;

void t.test('truncated and mangled example policies never throw', (t) => {
  const bytes = readFileSync(examplePath);
  const random = mulberry32(20261231);
  const noise = [...':-[]{}"\'*&!|>#\t\n ,?%@`\\~\u00e9'];
  let failures = 0;
  const check = (input: string | Buffer, label: string) => {
    let r;
    try {
      r = parsePolicyText(input, file);
    } catch (err) {
      failures += 1;
      t.fail(`${label}: threw ${String(err)}`);
      return;
    }
    const ok =
      (r.policy !== undefined) === (r.errors.length === 0) &&
      r.errors.every(
        (e) =>
          e.file === file &&
          Number.isInteger(e.line) &&
          e.line >= 1 &&
          Number.isInteger(e.column) &&
          e.column >= 1 &&
          e.message.length > 0 &&
          !e.message.includes('\n'),
      );
    if (!ok) {
      failures += 1;
      t.fail(`${label}: malformed result ${JSON.stringify(r.errors)}`);
    }
  };
  // A sample: hardening/fuzz-policy.test.ts cuts this same example at every 7th byte and
  // mutates it thousands of times; these add other noise and check each error's fields.
  for (let i = 0; i < SAMPLES; i++) {
    const cut = Math.floor(random() * (bytes.length + 1));
    check(bytes.subarray(0, cut), `truncated at byte ${cut}`);
  }
  const text = bytes.toString('utf8');
  for (let i = 0; i < SAMPLES; i++) {
    const chars = [...text];
    for (let k = 0; k < 3; k++) {
      const at = Math.floor(random() * chars.length);
      chars[at] = noise[Math.floor(random() * noise.length)]!;
    }
    check(chars.join(''), `mangled #${i}`);
  }
  t.equal(failures, 0);
  t.end();
});
