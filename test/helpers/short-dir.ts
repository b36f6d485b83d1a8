/**
 * A short temp directory, for Unix sockets (tap's fixture paths exceed sun_path). Its own module:
 * a test that needs only this does not load the daemon with helpers/daemon.ts (about 0.5 s of
 * CPU per test process under tap's module tracker).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A new directory under the system's temp dir with a short name. */
export function shortDir(): string {
  return mkdtempSync(join(tmpdir(), 'mr-'));
}
