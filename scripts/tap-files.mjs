// `npm run test:file -- test/a.test.ts [test/b.test.ts ...] [tap options]`: run some test files
// the way `npm test` runs them all, compiled, from dist/test (package.json's `tap` section says
// why). Each test/…/x.test.ts argument becomes dist/test/…/x.test.js; other arguments go to tap
// unchanged. `npm run test:file` has compiled everything first.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2).map((arg) => {
  const m = /^(?:\.\/)?test\/(.+)\.ts$/.exec(arg);
  if (!m) return arg;
  const compiled = `dist/test/${m[1]}.js`;
  if (!existsSync(compiled)) {
    process.stderr.write(
      `tap-files: ${arg} has no compiled ${compiled}; is it a test under test/?\n`,
    );
    process.exit(2);
  }
  return compiled;
});
const tap = fileURLToPath(new URL('../node_modules/.bin/tap', import.meta.url));
const run = spawnSync(tap, args, { stdio: 'inherit' });
process.exit(run.status ?? 1);
