/**
 * One line indented by a space too many or too few gives one error, at that line, saying which
 * lines it fails to line up with; not YAML's several errors about implicit keys at column 1.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parsePolicyText } from '../../policies/parse.js';
import { REPO } from '../helpers/repo.js';

const errorsOf = (text: string) =>
  parsePolicyText(text, 'p.yaml').errors.map((e) => `${e.line}:${e.column} ${e.message}`);

const ROOTS = 'version: 1\nservers:\n  fs:\n    roots:\n';

void t.test('every line of every example, moved a space left or right', (t) => {
  const dir = join(REPO, 'examples');
  const files = [
    ...readdirSync(dir).filter((f) => f.endsWith('.yaml')),
    ...readdirSync(join(dir, 'mcp-roots.d')).map((f) => join('mcp-roots.d', f)),
    join('demo', 'mcp-roots.yaml'),
  ];
  t.ok(files.length >= 5, `${files.length} examples`);
  let broken = 0;
  for (const file of files) {
    const lines = readFileSync(join(dir, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!/^ *[^ #]/.test(lines[i]!)) continue;
      const moves = lines[i]!.startsWith(' ')
        ? [' ' + lines[i]!, lines[i]!.slice(1)]
        : [' ' + lines[i]!];
      for (const moved of moves) {
        const text = [...lines.slice(0, i), moved, ...lines.slice(i + 1)].join('\n');
        const errors = parsePolicyText(text, 'p.yaml').errors;
        if (errors.length === 0) continue;
        broken++;
        const where = `${file}:${i + 1} moved to ${moved.length - moved.trimStart().length}`;
        t.equal(errors.length, 1, `${where}: one error`);
        t.equal(errors[0]!.line, i + 1, `${where}: at the moved line (${errors[0]!.message})`);
      }
    }
  }
  t.ok(broken > 150, `${broken} moves broke a file`);
  t.end();
});

void t.test('what the error says, case by case', (t) => {
  t.same(errorsOf(`${ROOTS}      - path: ~/a\n     - path: ~/b\n`), [
    '6:6 invalid YAML: this line is indented by 5 spaces, which lines up with no line above it (the list item on line 5 at 6 spaces; "roots:" on line 4 at 4 spaces); indent it by as many spaces as the lines it belongs with',
  ]);
  t.same(
    errorsOf(`${ROOTS}      - path: ~/a\n     - path: ~/b\n`.replace(/\n/g, '\r\n')),
    errorsOf(`${ROOTS}      - path: ~/a\n     - path: ~/b\n`),
    'CRLF line ends',
  );
  t.same(
    errorsOf(`${ROOTS}      - path: ~/a\n\n        # a note\n     - path: ~/b\n`),
    [
      '8:6 invalid YAML: this line is indented by 5 spaces, which lines up with no line above it (the list item on line 5 at 6 spaces; "roots:" on line 4 at 4 spaces); indent it by as many spaces as the lines it belongs with',
    ],
    'blank and comment lines between',
  );
  t.same(
    errorsOf(`${ROOTS}      - path: ~/a\n        readOnly: true\n         name: x\n`),
    [
      '7:10 invalid YAML: this line is indented by 9 spaces, which lines up with no line above it ("readOnly:" on line 6 at 8 spaces); indent it by as many spaces as the lines it belongs with',
    ],
    'deeper than a key with a value: YAML names the line above, the error names this one',
  );
  t.same(errorsOf(' version: 1\nservers:\n  fs:\n    roots:\n      - path: ~/a\n'), [
    "1:2 invalid YAML: the file's first key is indented by 1 space; start the top-level keys (version, servers, …) at the beginning of the line",
  ]);
  t.same(errorsOf(`${ROOTS}       - path: ~/a\n        readOnly: true\n`), [
    '5:8 invalid YAML: this line is indented by 7 spaces, but line 6, in the same block under "roots:" (line 4), by 8 spaces; indent the lines of one block by the same number of spaces',
  ]);
  t.same(errorsOf(`${ROOTS}      - path: ~/a\n      readOnly: true\n`), [
    '6:7 invalid YAML: this key lines up with the dash of the list item on line 5, so it is neither in that item nor an item of its own; indent it by 8 spaces to put it in that item, or start it with "- " to make it a new item',
  ]);
  t.same(errorsOf('version: 1\ndeny:\n  - ~/.ssh\n- ~/.aws\n'), [
    '4:1 invalid YAML: this list item is indented by 0 spaces, but the first item of its list (line 3) by 2 spaces; indent the items of one list by the same number of spaces',
  ]);
  t.end();
});

void t.test('where lines cannot be read one by one, YAML says what is wrong', (t) => {
  const block = errorsOf(
    'version: 1\nservers:\n  fs:\n    note: |\n      text\n    roots:\n      - path: ~/a\n     - path: ~/b\n',
  );
  t.ok(block.length > 0 && block.every((e) => !e.includes('lines up')), 'after a block scalar');
  t.same(errorsOf(`${ROOTS}      - path: "~/a\n      - path: ~/b\n`), [
    '5:15 invalid YAML: this "quote is never closed; add the closing "',
  ]);
  t.same(errorsOf(`${ROOTS}    roots: [\n      {path: ~/a},\n     {path: ~/b}\n`).length, 1);
  // A plain value written over two lines is valid YAML, indented as it likes: an error further
  // on is not blamed on it.
  t.same(errorsOf(`${ROOTS}      - path: ~/a\n          b\n      - path: "~/c\n`), [
    '7:15 invalid YAML: this "quote is never closed; add the closing "',
  ]);
  t.same(errorsOf(`${ROOTS}    - path: ~/a\n    readOnly: true\n`), [], 'a list at its key column');
  t.end();
});

void t.test('a file of the largest size whose every line YAML refuses: one error', (t) => {
  // The first key indented makes YAML refuse each line after it: 100,000-odd errors to look through.
  let text = ' version: 1\nservers:\n';
  for (let i = 0; text.length < 700_000; i++)
    text += `  s${i}:\n    roots:\n      - path: ~/a${i}\n`;
  t.same(errorsOf(text), [
    "1:2 invalid YAML: the file's first key is indented by 1 space; start the top-level keys (version, servers, …) at the beginning of the line",
  ]);
  t.end();
});
