/**
 * rootsctl's bin as npm installs it: a link in `node_modules/.bin` to the package's
 * `dist/cli/rootsctl.cjs`, whose first lines are for sh (common/launcher.ts). Run as a program it
 * must behave as `#!/usr/bin/env node` did (every argument as given, rootsctl's own exit code,
 * the same process, any working directory), with Node started without NODE_EXTRA_CA_CERTS and
 * every program rootsctl starts seeing it exactly as the caller had it: unset, empty or set.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CARRIER, restoreExtraCaCerts } from '../../common/extra-ca-certs.js';
import { REPO } from '../helpers/bin.js';
import { waitFor } from '../helpers/poll.js';

const BIN = (
  JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { bin: Record<string, string> }
).bin.rootsctl!;

/** What a test's editor writes: whether each variable is set, and the value (one line each). */
const EDITOR = `#!/bin/sh
{
  printf '%s\\n' "\${NODE_EXTRA_CA_CERTS+set}" "\${NODE_EXTRA_CA_CERTS-}"
  printf '%s\\n' "\${${CARRIER}+set}" "\${${CARRIER}-}"
} > "$(dirname "$0")/seen"
exit 3
`;

/**
 * A project (its name has a space) whose node_modules holds this repository as npm links a
 * package (`npm link`, a workspace), with npm's relative link to the bin; a policy and a home.
 */
function installed(t: Test) {
  const dir = realpathSync(
    t.testdir({ 'my project': { node_modules: { '.bin': {} } }, elsewhere: {}, home: {}, ed: {} }),
  );
  const project = join(dir, 'my project');
  symlinkSync(REPO, join(project, 'node_modules', 'mcp-roots'));
  const link = join(project, 'node_modules', '.bin', 'rootsctl');
  symlinkSync(join('..', 'mcp-roots', BIN), link);
  const policy = join(project, 'mcp-roots.yaml');
  writeFileSync(policy, `version: 1\nservers:\n  fs:\n    roots: [{path: ${dir}/home}]\n`);
  writeFileSync(join(dir, 'ed', 'editor'), EDITOR, { mode: 0o755 });
  const env: Record<string, string> = { HOME: join(dir, 'home'), PATH: process.env.PATH! };
  const run = (
    file: string,
    args: string[],
    opts: { cwd?: string; env?: Record<string, string> } = {},
  ) => {
    const r = spawnSync(file, args, {
      cwd: opts.cwd ?? dir,
      env: opts.env ?? env,
      encoding: 'utf8',
    });
    if (r.error) throw r.error;
    return { code: r.status, signal: r.signal, out: r.stdout, err: r.stderr };
  };
  /** What the editor `rootsctl edit` started saw, after a run with `vars` added to `env`. */
  const childSees = (vars: Record<string, string>) => {
    const r = run(link, ['--config', policy, 'edit'], {
      env: { ...env, ...vars, EDITOR: join(dir, 'ed', 'editor') },
    });
    t.equal(r.code, 1, `rootsctl reports the editor's failure: ${r.err}`);
    t.match(r.err, /exited with 3/);
    const [caSet, ca, carrierSet] = readFileSync(join(dir, 'ed', 'seen'), 'utf8').split('\n');
    return { ca: caSet === 'set' ? ca : undefined, carrier: carrierSet === 'set' };
  };
  return { dir, project, link, policy, env, run, childSees };
}

void t.test('every argument reaches rootsctl as given', (t) => {
  const { dir, link, run, env } = installed(t);
  // Spaces, quotes, glob characters, a variable, a command substitution, a backslash, a newline:
  // nothing is split, expanded or run on the way.
  const odd = join(dir, `w a  b 'c' "d" *?[x] $HOME \`id\` \\ e\nf`);
  mkdirSync(odd);
  const policy = join(odd, 'p.yaml');
  writeFileSync(policy, `version: 1\nservers:\n  fs:\n    roots: [{path: ${dir}/home}]\n`);
  const r = run(link, ['--json', 'validate', policy]);
  t.equal(r.code, 0, r.err);
  t.same((JSON.parse(r.out) as { files: string[] }).files, [policy]);
  // An empty argument and a lone glob are arguments too.
  const extra = run(link, ['status', '', '*']);
  t.equal(extra.code, 2);
  t.match(extra.err, 'status takes 0 arguments, got 2');
  // And the same through `node` on the link: the first lines are JavaScript too.
  const byNode = run(process.execPath, [link, '--json', 'validate', policy], { env });
  t.same(byNode, r);
  t.end();
});

void t.test("the exit code is rootsctl's own", (t) => {
  const { link, run, dir } = installed(t);
  t.equal(run(link, ['--version']).code, 0);
  t.equal(run(link, ['validate', join(dir, 'missing.yaml')]).code, 1);
  t.equal(run(link, ['no-such-command']).code, 2);
  t.end();
});

void t.test('it runs from any directory: by a relative path, and by name on PATH', (t) => {
  const { dir, project, run, env } = installed(t);
  const elsewhere = join(dir, 'elsewhere');
  writeFileSync(join(elsewhere, 'here.yaml'), `version: 1\nservers: {}\n`);
  const relative = join('..', 'my project', 'node_modules', '.bin', 'rootsctl');
  const onPath = { ...env, PATH: `${join(project, 'node_modules', '.bin')}:${env.PATH}` };
  for (const [file, runEnv] of [
    [relative, env],
    ['rootsctl', onPath],
  ] as const) {
    // A relative policy path means what it means where the caller stands.
    const r = run(file, ['--json', 'validate', 'here.yaml'], { cwd: elsewhere, env: runEnv });
    t.equal(r.code, 0, `${file}: ${r.err}`);
    t.same((JSON.parse(r.out) as { files: string[] }).files, [join(elsewhere, 'here.yaml')]);
  }
  t.end();
});

void t.test('a program rootsctl starts sees NODE_EXTRA_CA_CERTS as the caller had it', (t) => {
  const { childSees } = installed(t);
  t.same(childSees({}), { ca: undefined, carrier: false }, 'unset stays unset');
  t.same(childSees({ NODE_EXTRA_CA_CERTS: '' }), { ca: '', carrier: false }, 'empty stays empty');
  const value = '/etc/ssl/some certs/extra.pem';
  t.same(childSees({ NODE_EXTRA_CA_CERTS: value }), { ca: value, carrier: false }, 'set');
  // The carrier is mcp-roots' own name: one in the caller's environment is never taken for the
  // person's certificates.
  t.same(
    childSees({ [CARRIER]: '/planted.pem' }),
    { ca: undefined, carrier: false },
    'a stray carrier',
  );
  t.end();
});

void t.test(
  'Node starts without NODE_EXTRA_CA_CERTS, in the process the caller started',
  async (t) => {
    const { dir, link, env } = installed(t);
    const state = join(dir, 'state');
    mkdirSync(state);
    // `log --follow` runs until stopped: long enough to look at the process.
    const child = spawn(link, ['log', '--follow', '--state-dir', state], {
      cwd: dir,
      env: { ...env, NODE_EXTRA_CA_CERTS: '/etc/ssl/extra.pem' },
      stdio: 'ignore',
    });
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('exit', (code, signal) => resolve([code, signal])),
    );
    const pid = child.pid!;
    const argv = () => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    // sh execs Node in the same process: its command line becomes Node's.
    await waitFor(() => argv()[0] === 'node', 30_000, 'node in the process spawned');
    t.same(argv().slice(1, 3), ['--', link]);
    // The environment Node started with (what /proc keeps from exec, before rootsctl puts it back).
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    t.notOk(
      environ.some((v) => v.startsWith('NODE_EXTRA_CA_CERTS=')),
      'not for Node itself',
    );
    t.ok(environ.includes(`${CARRIER}=/etc/ssl/extra.pem`), 'carried');
    // A signal to the process the caller started is one to rootsctl; no sh is left to outlive it.
    child.kill('SIGKILL');
    t.same(await exited, [null, 'SIGKILL']);
  },
);

void t.test('restoreExtraCaCerts puts the value back and the carrier away', (t) => {
  const cases: [NodeJS.ProcessEnv, NodeJS.ProcessEnv][] = [
    [{}, {}],
    [{ [CARRIER]: '' }, { NODE_EXTRA_CA_CERTS: '' }],
    [{ [CARRIER]: '/a b.pem' }, { NODE_EXTRA_CA_CERTS: '/a b.pem' }],
    [{ NODE_EXTRA_CA_CERTS: '/mine.pem' }, { NODE_EXTRA_CA_CERTS: '/mine.pem' }],
    // `node` started on the bin by hand with both: the person's own value stands.
    [
      { NODE_EXTRA_CA_CERTS: '/mine.pem', [CARRIER]: '/other.pem' },
      { NODE_EXTRA_CA_CERTS: '/mine.pem' },
    ],
  ];
  for (const [env, want] of cases) {
    const got = { ...env };
    restoreExtraCaCerts(got);
    t.same(got, want, JSON.stringify(env));
  }
  t.end();
});
