/** `servers.<name>.launch` and `sandbox`: validated, expanded and merged over matching blocks. */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { contextFor, evaluate } from '../helpers/policy.js';

void t.test('launch and sandbox through the engine', async (t) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mr-launch-')));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const home = join(dir, 'home');
  const r = await evaluate(
    dir,
    `version: 1
servers:
  "*":
    sandbox:
      read: [~/go/pkg/mod, ./tools]
  git:
    launch:
      command: uvx
      args: [mcp-server-git, "--repository={root}"]
      env: { GIT_DIR_LIST: "{roots}" }
      cwd: "{root}"
    sandbox:
      write: [$PROJECT/cache]
      network: false
  "git*":
    sandbox: false
  fs:
    launch: { command: npx }
  fs-2:
    sandbox: true
`,
    contextFor(dir),
  );
  t.same(r.errors, [], 'the policy loads');
  const p = r.resolved;
  const { deny: gitDeny, ...git } = p.launch('git');
  // With write paths, the denies and protected paths, for the sandbox to hold there as in a root.
  const { deny, ...sandbox } = git.sandbox!;
  t.same(gitDeny, deny, "and beside the rule, for the program's directories");
  t.ok(
    deny?.some(
      (d) => 'uri' in d && d.uri === `file://${dir}/mcp-roots.yaml` && d.access === 'write',
    ),
    'with write paths: the denies and protected paths (the policy file write-denied)',
  );
  t.same(
    { ...git, sandbox },
    {
      launch: {
        command: 'uvx',
        args: ['mcp-server-git', '--repository={root}'],
        env: { GIT_DIR_LIST: '{roots}' },
        cwd: '{root}',
      },
      sandbox: {
        read: [join(home, 'go/pkg/mod'), join(dir, 'tools')],
        write: [join(home, 'projects/alpha/cache')],
        network: false,
      },
    },
    'a later block cannot turn a sandbox off; paths expand like roots',
  );
  // With read paths alone, the denies too (what is denied is hidden there), and no includes.
  const { deny: fsProgramDeny, ...fs } = p.launch('fs');
  const { deny: fsDeny, ...fsSandbox } = fs.sandbox!;
  t.same(fsProgramDeny, deny, "beside the rule, for the program's directories");
  t.same(fsDeny, deny, 'with read paths: the same denies');
  t.same(
    { ...fs, sandbox: fsSandbox },
    {
      launch: { command: 'npx' },
      sandbox: { read: [join(home, 'go/pkg/mod'), join(dir, 'tools')], write: [], network: true },
    },
  );
  t.same(p.launch('fs-2').sandbox?.network, true);
  t.equal(p.launch('fs-2').sandbox?.unixSockets, undefined, 'Unix sockets: refused by default');

  const bad: [string, RegExp][] = [
    ['launch: { args: [x] }', /command/],
    ['launch: { command: x, env: { "1A": y } }', /1A|propertyNames|pattern/],
    ['launch: { command: x, shell: true }', /shell/],
    ['sandbox: { network: "no" }', /network|boolean/],
    ['sandbox: { exec: [] }', /exec/],
    ['sandbox: { unixSockets: "yes" }', /unixSockets|boolean/],
  ];
  for (const [yaml, message] of bad) {
    const b = await evaluate(
      dir,
      `version: 1\nservers:\n  s:\n    ${yaml}\n`,
      contextFor(dir),
      'bad.yaml',
    );
    t.match(b.errors.map((e) => e.message).join('\n'), message, yaml);
  }
});

void t.test(
  'sandbox.unixSockets: allowed by a block that says so, unless one says false',
  async (t) => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mr-launch-')));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const r = await evaluate(
      dir,
      `version: 1
servers:
  "py*":
    sandbox: { unixSockets: true }
  py-strict:
    sandbox: { unixSockets: false }
  py-plain:
    sandbox: true
`,
      contextFor(dir),
    );
    t.same(r.errors, []);
    t.equal(r.resolved.launch('py-plain').sandbox?.unixSockets, true, 'from the pattern block');
    t.equal(
      r.resolved.launch('py-strict').sandbox?.unixSockets,
      undefined,
      'false in any block wins',
    );
    t.equal(r.resolved.launch('other').sandbox, undefined, 'no block, no sandbox');
  },
);
