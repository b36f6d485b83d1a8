/** Files the daemon keeps in its state directory, written whole or not at all. */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errnoCode, ignoreMissing, RootsError } from '../common/errors.js';

/** Write a file so that a crash leaves the old or the new content, never a torn one. */
export async function writeAtomically(
  file: string,
  text: string,
  options: { kept?: string; makeDir?: boolean } = {},
): Promise<void> {
  const { kept = 'the previous file is kept', makeDir = true } = options;
  const dir = dirname(file);
  if (makeDir) await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const handle = await open(
      temp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
      0o600,
    );
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true });
    throw new RootsError(
      'INTERNAL',
      `cannot write ${file} (${errnoCode(err) ?? String(err)}); ${kept}`,
      { cause: err },
    );
  }
  // Make the rename itself durable.
  const dirHandle = await ignoreMissing(open(dir, constants.O_RDONLY));
  if (dirHandle) {
    try {
      await dirHandle.sync();
    } finally {
      await dirHandle.close();
    }
  }
}
