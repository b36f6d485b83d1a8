/**
 * What rootsctl prints may hold names nobody checked: a directory an agent made in a glob's base
 * (listed as a root, named in a check's reason), or anything a process answering on the socket
 * the person named says. Before, `list`, `explain`, `check` and `status` printed such names raw,
 * and `--json` wrote C1 and bidi controls raw: an agent that may write in a glob's base could
 * make a directory named `ESC ] 52 ; c ; … BEL` and write the person's clipboard, or clear the
 * screen, when they ran `rootsctl list`. Each command runs against a real daemon whose glob
 * matches such names (and `status` against a fake one): nothing a terminal acts on is printed
 * raw, in tables, messages or JSON, and JSON still reads back to the daemon's values.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { doctorText } from '../../cli/commands/doctor.js';
import { rootsctl } from '../helpers/cli.js';
import { startDaemon } from '../helpers/daemon.js';
import { fakeStatusDaemon, statusSaying } from '../helpers/fake-status-daemon.js';
import { waitFor } from '../helpers/poll.js';
import { ACTED_ON_RAW } from '../helpers/terminal-controls.js';

const NAMES = [
  'osc\u001b]52;c;ZWNobyBwd25lZA==\u0007',
  'clear\u001b[2J',
  'cr\rX',
  'bidi\u202etxt',
  'c1\u009b2J',
  'sep\u2028x',
  // Shown as nothing: another directory that reads as `plain`.
  'plain\u200b',
  'bom\ufeff',
  // rootsctl's own colour codes: in a name they are a name's, and escaped like any other.
  'red\u001b[31m',
  'reset\u001b[0m',
];

void t.test('list, explain and check with names an agent made', async (t) => {
  const td = await startDaemon(t, undefined);
  const g = join(realpathSync(td.dir), 'g');
  mkdirSync(join(g, 'plain'), { recursive: true });
  for (const n of NAMES) mkdirSync(join(g, n));
  td.writePolicy(`version: 1\nservers:\n  s:\n    roots:\n      - path: ${g}/*\n`);
  const env = { HOME: '/h' };
  await waitFor(async () => {
    const r = await rootsctl(['list', 's', '--socket', td.socket, '--json'], { env });
    return r.out.includes('plain') && r.out.split('"uri"').length - 1 === NAMES.length + 1;
  });
  for (const args of [
    ['list', 's'],
    ['list', 's', '--json'],
    ['explain', 's'],
    ['explain', 's', '--json'],
    ['check', 's', join(g, '..', `out${NAMES[0]}`)],
    ['check', 's', join(g, '..', `out${NAMES[0]}`), '--json'],
    ['check', 's', join(g, NAMES[4]!, 'f')],
    ['check', 's', join(g, NAMES[6]!, 'f')],
  ]) {
    const r = await rootsctl([...args, '--socket', td.socket], { env });
    t.notMatch(r.out, ACTED_ON_RAW, `${args.join(' ')}: nothing raw on stdout`);
    t.notMatch(r.err, ACTED_ON_RAW, `${args.join(' ')}: nothing raw on stderr`);
    if (args.includes('--json')) t.doesNotThrow(() => JSON.parse(r.out) as unknown, 'still JSON');
  }
  const json = await rootsctl(['list', 's', '--socket', td.socket, '--json'], { env });
  const uris = (JSON.parse(json.out) as { roots: { uri: string; name?: string }[] }).roots.map(
    (r) => r.name,
  );
  t.ok(
    NAMES.every((n) => uris.includes(n)),
    'the JSON reads back to the names themselves',
  );
});

void t.test('status from a daemon that says anything', async (t) => {
  const bad = 'x\u001b]52;c;cHduZWQ=\u0007\u009b2J\u202e';
  const socket = await fakeStatusDaemon(t, statusSaying(bad));
  for (const args of [['status'], ['status', '--json']]) {
    const r = await rootsctl([...args, '--socket', socket], { env: { HOME: '/h' } });
    t.notMatch(r.out, ACTED_ON_RAW, `${args.join(' ')}: nothing raw on stdout`);
    t.notMatch(r.err, ACTED_ON_RAW, `${args.join(' ')}: nothing raw on stderr`);
    t.match(r.out, /\\u001b\]52;c;/, `${args.join(' ')}: shown escaped`);
  }
});

void t.test("doctor's colours are its own: those in what it names are escaped", (t) => {
  const text = doctorText(
    [
      {
        name: 'policy\u001b[32m',
        verdict: 'fail',
        detail: `${NAMES[0]} looks \u001b[32mOK\u001b[0m`,
        fix: [`rm ${NAMES[1]}`],
      },
    ],
    true,
  );
  t.match(text, '\u001b[31mFAIL\u001b[0m', 'its own label is red');
  t.match(text, '\u001b[2mfix:\u001b[0m', 'and its own dim');
  // What is left once its own four colour codes are taken out: nothing a terminal acts on.
  const own = ['\u001b[31mFAIL\u001b[0m', '\u001b[2mfix:\u001b[0m'];
  let rest = text;
  for (const o of own) rest = rest.replaceAll(o, '');
  t.notMatch(rest, ACTED_ON_RAW, 'every name escaped');
  t.match(rest, '\\u001b[32mOK\\u001b[0m', 'shown as text');
  t.end();
});
