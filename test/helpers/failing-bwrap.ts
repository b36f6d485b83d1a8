/**
 * A `bwrap` that fails the way a machine's bubblewrap does, for the advice the proxy and doctor
 * give: it answers `--help` (as the real one does before the probe) and stops on every run with
 * `bwrap: <error>`, bubblewrap's own form.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shortDir } from './short-dir.js';

/** A new directory under `under` (a short temp dir if not given) that holds only such a bwrap. */
export function failingBwrap(error: string, under = shortDir()): string {
  const bin = mkdtempSync(join(under, 'bin-'));
  writeFileSync(
    join(bin, 'bwrap'),
    `#!/bin/sh\ncase "$1" in --help) echo "usage: bwrap"; exit 0;; esac\necho "bwrap: ${error}" >&2\nexit 1\n`,
  );
  chmodSync(join(bin, 'bwrap'), 0o755);
  return bin;
}
