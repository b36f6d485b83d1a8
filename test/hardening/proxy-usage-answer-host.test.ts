/**
 * A proxy started with a wrong command line answers the host's first request with the usage
 * error (usage-answer.ts), then exits 2. Attacked with a host that sends its request and closes
 * its end of the proxy's stdout at once (EPIPE on the answer): **was a hole:** an unhandled
 * 'error' event, a stack trace on stderr and exit 1. Also: a host that sends garbage and then
 * closes stdin, and a host whose stdin closes before sending anything: exit 2, no server started.
 *
 * The real proxy executable as a child; the "server" it is given would leave a mark if started.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { bin } from '../helpers/bin.js';

const INITIALIZE = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n';

/** Run the proxy with a wrong option; `host` drives its stdin and stdout. */
function wrongProxy(
  mark: string,
  host: (child: ReturnType<typeof spawn>) => void,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(
    process.execPath,
    [
      bin('proxy'),
      '--bogus',
      '--server',
      'fs',
      '--',
      process.execPath,
      '-e',
      `require('fs').writeFileSync(${JSON.stringify(mark)}, 'x')`,
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  child.stdin.on('error', () => {});
  host(child);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

void t.test('a wrong command line exits 2 whatever the host does', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'usage-answer-'));
  const cases: [string, (child: ReturnType<typeof spawn>) => void][] = [
    [
      'the host closes its reading end right after its request',
      (child) => {
        child.stdout!.destroy();
        child.stdin!.write(INITIALIZE);
      },
    ],
    ['the host sends garbage, then ends', (child) => child.stdin!.end('\u0000not json\n')],
    ['the host ends before sending anything', (child) => child.stdin!.end()],
  ];
  for (const [name, host] of cases) {
    const mark = join(dir, `${cases.findIndex((c) => c[0] === name)}.started`);
    const { code, stderr } = await wrongProxy(mark, host);
    t.equal(code, 2, `${name}: exit 2`);
    t.notMatch(stderr, /Unhandled|EPIPE|\n\s+at /, `${name}: no stack trace`);
    t.notOk(existsSync(mark), `${name}: no server started`);
  }
});
