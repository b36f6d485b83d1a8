/**
 * A name with a line's end in it must not add a line to what rootsctl prints. Escaping what a
 * terminal acts on (cli-controls.test.ts) kept `\n`, as a command's own text has it; so a
 * directory an agent named `x\nallowed: read: /etc/shadow` in a glob's base printed, under
 * `rootsctl check`, a second line that read as rootsctl's own answer, and the same name forged
 * lines in `status`, `grant`, `validate`, errors and `doctor`. Every command here runs against
 * a real daemon whose glob matches such names, or a fake one that answers anything: no line of
 * its output may start with what the name carried. A daemon's answer of the wrong shape is one
 * clear error naming the field (and a `roots/check` whose `allowed` is not a boolean is never an
 * allow), not a `TypeError` from inside a command.
 */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { doctorText } from '../../cli/commands/doctor.js';
import { RootsClient } from '../../protocol/client.js';
import { rootsctl, type CliResult } from '../helpers/cli.js';
import { startDaemon } from '../helpers/daemon.js';
import { fakeStatusDaemon, statusSaying } from '../helpers/fake-status-daemon.js';
import { waitFor } from '../helpers/poll.js';

/** Each name carries a forged line after a line end of another kind. */
const NAMES = ['nl\nFORGED allowed', 'cr\rFORGED cr', 'crlf\r\nFORGED crlf', 'ls\u2028FORGED ls'];

/** Every line of both streams, split where a terminal would start a new row. */
function rows(r: CliResult): string[] {
  // eslint-disable-next-line no-control-regex
  return `${r.out}\n${r.err}`.split(/\r\n|[\n\r\u2028\u2029\u0085\u000b\u000c]/);
}

function noForgedLine(t: Test, r: CliResult, what: string): void {
  const forged = rows(r).filter((l) => l.startsWith('FORGED'));
  t.same(forged, [], `${what}: no line starts with a name's forged text`);
  t.notMatch(`${r.out}${r.err}`, /\r|\u2028/, `${what}: no raw carriage return or separator`);
}

void t.test('every command against a daemon whose glob matches such names', async (t) => {
  const td = await startDaemon(t, undefined);
  const dir = realpathSync(td.dir);
  const g = join(dir, 'g');
  mkdirSync(join(g, 'plain'), { recursive: true });
  for (const n of NAMES) mkdirSync(join(g, n));
  // A missing path is a warning that quotes it: in `status`, `validate`, `edit`.
  td.writePolicy(
    `version: 1\nservers:\n  s:\n    roots:\n      - path: ${g}/*\n      - path: "${dir}/missing\\nFORGED warning"\n`,
  );
  const env = { HOME: '/h' };
  await waitFor(async () => {
    const r = await rootsctl(['list', 's', '--socket', td.socket, '--json'], { env });
    return r.out.split('"uri"').length - 1 === NAMES.length + 1;
  });
  const runs: string[][] = [
    ['list', 's'],
    ['explain', 's'],
    ['explain', 's', '--all'],
    ['status'],
    ['check', 's', join(g, NAMES[0]!, 'f')],
    ['check', 's', join(dir, 'outside\nFORGED outside')],
    ['check', 's', join(g, NAMES[1]!, 'f'), '--write'],
  ];
  for (const n of NAMES) runs.push(['grant', 's', join(g, n), '--for', '5m']);
  runs.push(['grants'], ['revoke', 's', join(g, NAMES[2]!)]);
  for (const args of runs) {
    const r = await rootsctl([...args, '--socket', td.socket], { env });
    noForgedLine(t, r, args.join(' ').replace(/[\n\r\u2028]/g, '?'));
  }
  const checked = await rootsctl(['check', 's', join(g, NAMES[0]!, 'f'), '--socket', td.socket], {
    env,
  });
  t.equal(checked.out.split('\n').length, 2, 'check: one line');
  t.match(checked.out, /^allowed: read: .*nl\\nFORGED allowed/, 'the name shown escaped');
  const status = await rootsctl(['status', '--socket', td.socket], { env });
  t.match(status.out, /missing\\nFORGED warning/, 'status: the warning on its line, escaped');

  // Offline, through the policy file: validate's warning lines.
  const file = join(dir, 'p.yaml');
  writeFileSync(file, `version: 1\nservers:\n  s:\n    roots:\n      - path: "/nx\\nFORGED v"\n`);
  const v = await rootsctl(['validate', '--config', file], { env });
  noForgedLine(t, v, 'validate');
  t.match(v.out, /^warning: .*nx\\nFORGED v/m, 'validate: the warning on one line');
});

void t.test('an error message or a doctor detail with a line end stays one line', async (t) => {
  // A policy file that does not exist: the message quotes it.
  const r = await rootsctl(['explain', 's', '--config', '/nonexistent\nFORGED error']);
  noForgedLine(t, r, 'a missing policy file');
  t.match(r.err, /^rootsctl: .*nonexistent\\nFORGED error/, 'the message on its line');
  const text = doctorText(
    [
      {
        name: 'socket\nFORGED name',
        verdict: 'fail',
        detail: 'x\rFORGED detail',
        fix: ['a\nFORGED fix'],
      },
    ],
    false,
  );
  t.same(
    text.split('\n').filter((l) => l.startsWith('FORGED')),
    [],
    'doctor: every check and fix on its own line',
  );
  t.notMatch(text, /\r/, 'doctor: no raw carriage return');
  t.end();
});

void t.test('status from a daemon whose values hold line ends', async (t) => {
  const bad = 'v\nFORGED status';
  const socket = await fakeStatusDaemon(t, statusSaying(bad));
  const r = await rootsctl(['status', '--socket', socket], { env: { HOME: '/h' } });
  t.match(r.out, /^mcp-rootsd v\\nFORGED status, pid 1/, 'status answers, the version escaped');
  noForgedLine(t, r, 'status');
});

void t.test('a daemon whose answers have the wrong shape', async (t) => {
  const socket = await fakeStatusDaemon(t, { allowed: 'false', access: 'read', reason: 'r' });
  for (const args of [
    ['status'],
    ['list', 's'],
    ['explain', 's'],
    ['grants'],
    ['grant', 's', '/'],
    ['revoke', 's'],
    ['watch', 's'],
    ['check', 's', '/etc'],
  ]) {
    const r = await rootsctl([...args, '--socket', socket], { env: { HOME: '/h' } });
    t.equal(r.code, 1, `${args[0]}: fails`);
    t.match(
      r.err,
      /^rootsctl: the answer of mcp-rootsd on .* to [a-z/]+ is not what this client expects: `[^`]+` is /,
      `${args[0]}: says which answer and which field`,
    );
    t.match(r.err, /same mcp-roots installation/, `${args[0]}: and what to do`);
    t.notMatch(r.err, /Cannot read properties/, `${args[0]}: no TypeError`);
    t.equal(r.out, '', `${args[0]}: prints no answer`);
  }
  // The proxy asks through the same client: `allowed: "false"` is an error, never an allow.
  const client = await RootsClient.connect({ socket });
  t.teardown(() => client.close());
  await t.rejects(client.check('s', '/etc', 'read'), { code: 'PROTOCOL' }, 'check rejects');
});
