/** Reading the daemon's decision log: the rotated files oldest first, then following the current one. */
import { watch } from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { DECISION_KINDS, type Decision } from '../common/decision.js';
import { isObject } from '../common/is-object.js';

/** How many rotated files a reader looks for (more than the daemon keeps by default). */
const MAX_ROTATED = 9;

/** Every entry in `file` and its rotated copies, oldest first; lines that are not entries are counted. */
export async function readDecisions(file: string): Promise<{ entries: Decision[]; bad: number }> {
  const entries: Decision[] = [];
  let bad = 0;
  for (let i = MAX_ROTATED; i >= 0; i--) {
    const text = await readFile(i === 0 ? file : `${file}.${i}`, 'utf8').catch(missingAsEmpty);
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const entry = parseDecision(line);
      if (entry) entries.push(entry);
      else bad++;
    }
  }
  return { entries, bad };
}

/** One line as an entry, or undefined for anything else (a torn last line, another program's text). */
export function parseDecision(line: string): Decision | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isObject(value) || typeof value.time !== 'string' || typeof value.kind !== 'string')
    return undefined;
  if (!(DECISION_KINDS as readonly string[]).includes(value.kind)) return undefined;
  return value as unknown as Decision;
}

/**
 * Calls `onEntry` for each entry appended to `file` from now on, across rotations, until `stop`
 * resolves. Watches the directory, so a file that is rotated away or not yet created is followed.
 */
export async function followDecisions(
  file: string,
  onEntry: (d: Decision) => void,
  stop: Promise<void>,
): Promise<void> {
  let offset = (await stat(file).catch(() => undefined))?.size ?? 0;
  let ino = (await stat(file).catch(() => undefined))?.ino;
  let partial = '';
  let reading: Promise<void> = Promise.resolve();
  const readMore = async (): Promise<void> => {
    const st = await stat(file).catch(() => undefined);
    if (st === undefined) return;
    if (st.ino !== ino || st.size < offset) {
      // Rotated: the old file's tail was read on its last change; the new one starts at 0.
      ino = st.ino;
      offset = 0;
      partial = '';
    }
    if (st.size === offset) return;
    const handle = await open(file, 'r');
    try {
      const buf = Buffer.alloc(st.size - offset);
      const { bytesRead } = await handle.read(buf, 0, buf.length, offset);
      offset += bytesRead;
      const lines = (partial + buf.subarray(0, bytesRead).toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const entry = parseDecision(line);
        if (entry) onEntry(entry);
      }
    } finally {
      await handle.close();
    }
  };
  const name = basename(file);
  const watcher = watch(dirname(file), (_event, changed) => {
    if (changed !== null && changed !== name) return;
    reading = reading.then(readMore, readMore);
  });
  try {
    await stop;
  } finally {
    watcher.close();
    await reading.catch(() => undefined);
  }
}

function missingAsEmpty(err: unknown): string {
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
  throw err;
}
