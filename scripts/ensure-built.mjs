// `npm start`'s first step: build dist/ when it is not there. `npm ci` builds it (the `prepare`
// script), but node_modules put in place another way (copied, `npm ci --ignore-scripts`) leaves
// none, and the demo then failed with a stack trace of Node's MODULE_NOT_FOUND.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const needed = ['dist/daemon/main.js', 'dist/cli/main.js', 'dist/proxy/main.js'];
if (needed.every((f) => existsSync(root + f))) process.exit(0);

process.stderr.write(
  'mcp-roots: dist/ is not built (npm ci builds it; node_modules put here another way do not): running npm run build first\n',
);
const built = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
process.exit(built.status ?? 1);
