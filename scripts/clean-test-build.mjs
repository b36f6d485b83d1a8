// Build step before `tsc -p tsconfig.json` compiles the tests into dist/test: remove the last
// build's tests first, so that a test file deleted or renamed in test/ does not go on running
// from its stale compiled copy.
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

rmSync(fileURLToPath(new URL('../dist/test', import.meta.url)), { recursive: true, force: true });
