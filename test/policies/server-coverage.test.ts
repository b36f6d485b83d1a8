/** How a policy covers a server name: by name, by a pattern narrower than `'*'`, or by `'*'` alone. */
import t from 'tap';
import type { ParsedPolicyFile } from '../../policies/model.js';
import { serverCoverage } from '../../policies/server-coverage.js';

function file(...patterns: string[]): ParsedPolicyFile {
  return {
    file: '/p.yaml',
    sha256: '',
    include: [],
    defaults: { readOnly: false },
    deny: [],
    servers: patterns.map((pattern) => ({
      pattern,
      pos: { file: '/p.yaml', line: 1, column: 1 },
      roots: [],
      deny: [],
      tools: {},
    })),
  };
}

const CASES: [string, ParsedPolicyFile[], string, string | undefined][] = [
  ['a literal name', [file('fs', '*')], 'fs', 'name'],
  ['a typo under *', [file('fs', '*')], 'fss', 'catch-all'],
  ['** is a catch-all too', [file('fs', '**')], 'fss', 'catch-all'],
  ['a narrower pattern', [file('work-*', '*')], 'work-x', 'pattern'],
  ['a pattern that does not match', [file('work-*', '*')], 'wrok-x', 'catch-all'],
  ['a pattern alone', [file('work-*')], 'work-x', 'pattern'],
  ['nothing', [file('fs', 'work-*')], 'git', undefined],
  ['an escaped star is a literal', [file('a\\*', '*')], 'a*', 'name'],
  ['an escaped star does not match others', [file('a\\*')], 'ab', undefined],
  ['a grant names it (a later file)', [file('*'), file('fss')], 'fss', 'name'],
  ['no files', [], 'fs', undefined],
];

for (const [name, files, server, want] of CASES) {
  t.equal(serverCoverage(files, server), want, name);
}
