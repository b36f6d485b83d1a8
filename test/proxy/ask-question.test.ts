/**
 * The question's text (`askParams`): the server chooses its tools' names, so a long one is cut
 * where the person reads it, and cannot push the path out of a dialog nor end on a path of its own.
 */
import t from 'tap';
import { askParams, TOOL_NAME_SHOWN, type AskQuestion } from '../../proxy/ask-person.js';

function question(tool: string): AskQuestion {
  return {
    tool,
    path: '/w/out/a.txt',
    canonical: '/w/out/a.txt',
    access: 'read',
    refusal: 'outside',
    targets: [{ scope: 'directory', path: '/w/out' }],
  };
}

const message = (tool: string) => askParams('fs', question(tool)).message as string;

void t.test('a tool name up to the limit is shown whole', (t) => {
  const name = 'r'.repeat(TOOL_NAME_SHOWN);
  t.match(message(name), `(tool "${name}"), which is outside every root`);
  t.match(message('read_text_file'), '(tool "read_text_file"), which is outside');
  t.end();
});

void t.test('a longer one is cut, and says so', (t) => {
  const long = `read_text_file${' '.repeat(3000)}/home/me/allowed.txt`;
  const text = message(long);
  t.match(
    text,
    `(tool "read_text_file${' '.repeat(TOOL_NAME_SHOWN - 14)}"… (cut: 3034 characters))`,
  );
  t.notMatch(text, 'allowed.txt', 'the end of the name is not shown');
  t.ok(text.length < 400, `the message stays short (${text.length})`);
  t.match(text, 'wants to read "/w/out/a.txt"', 'the path comes first');
  // Cut by characters, not UTF-16 units: no half of a pair is shown.
  const astral = '😀'.repeat(TOOL_NAME_SHOWN + 1);
  t.match(
    message(astral),
    `"${'😀'.repeat(TOOL_NAME_SHOWN)}"… (cut: ${TOOL_NAME_SHOWN + 1} characters)`,
  );
  t.end();
});
