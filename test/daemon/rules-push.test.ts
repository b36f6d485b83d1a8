/**
 * `notifications/policy/rules_changed` reaches the subscribers of a server whose `launch`,
 * `sandbox`, `tools` or `ask` changed, and only them; an edit that changes none of a server's
 * rules (a comment, another server's rules) tells it nothing; a change of its roots alone is a
 * `roots/list_changed`, not a rules change. Each case waits for the notification a later edit
 * must send, so that a wrong one sent earlier would come first.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { RulesChangedParams } from '../../protocol/methods.js';
import { shortDir, startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';

interface Rules {
  a?: string;
  b?: string;
  comment?: string;
  aRoot?: string;
}

void t.test('rules changes are pushed to the server they change', async (t) => {
  const dir = shortDir();
  for (const p of ['a', 'a2', 'b']) mkdirSync(join(dir, p));
  const policy = (r: Rules) =>
    `version: 1\n${r.comment ?? ''}servers:\n` +
    `  a:\n${r.a ?? ''}    roots: [{path: ${dir}/${r.aRoot ?? 'a'}}]\n` +
    `  b:\n${r.b ?? ''}    roots: [{path: ${dir}/b}]\n`;
  const d = await startDaemon(t, policy({}), { dir });
  const client = await d.connect('rules-test');
  t.teardown(() => client.close());
  const got: string[] = [];
  client.on('rules_changed', (p: RulesChangedParams) => got.push(p.server));
  const lists: string[] = [];
  client.on('list_changed', (p) => lists.push(p.server));
  await client.listRoots('a', { subscribe: true });
  await client.listRoots('b', { subscribe: true });

  // [what, the policy now, the server told of a rules change (undefined: none)]
  const steps: [string, Rules, string | undefined][] = [
    ['a sandbox for a', { a: '    sandbox: true\n' }, 'a'],
    ['a comment only', { a: '    sandbox: true\n', comment: '# nothing\n' }, undefined],
    ['extra read paths for a', { a: `    sandbox: {read: [${dir}/b]}\n` }, 'a'],
    [
      'a launch for b',
      { a: `    sandbox: {read: [${dir}/b]}\n`, b: '    launch: {command: x}\n' },
      'b',
    ],
    [
      'a tool rule for a',
      {
        a: `    sandbox: {read: [${dir}/b]}\n    tools:\n      t: {readOnly: true}\n`,
        b: '    launch: {command: x}\n',
      },
      'a',
    ],
    [
      'ask for b',
      {
        a: `    sandbox: {read: [${dir}/b]}\n    tools:\n      t: {readOnly: true}\n`,
        b: '    launch: {command: x}\n    ask: true\n',
      },
      'b',
    ],
  ];
  for (const [what, rules, told] of steps) {
    d.writePolicy(policy(rules));
    if (told === undefined) continue;
    await waitFor(() => got.length > 0, 30_000, `a rules change for ${what}`);
    t.same(got.splice(0), [told], what);
  }
  // A change of a's roots alone: a list change, and no rules change (b's next one comes first).
  const last = steps.at(-1)![1];
  d.writePolicy(policy({ ...last, aRoot: 'a2' }));
  await waitFor(() => lists.includes('a'), 30_000, 'the list change');
  d.writePolicy(policy({ ...last, aRoot: 'a2', b: '    launch: {command: y}\n' }));
  await waitFor(() => got.length > 0, 30_000, 'the rules change after');
  t.same(got, ['b'], 'the roots change alone told nothing of rules');
});
