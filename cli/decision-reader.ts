/** Reading the daemon's decision log: the rotated files oldest first, then following the current one. */
import { watch } from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { DECISION_KINDS, type Decision } from '../common/decision.js';
import { isObject } from '../common/is-object.js';

/** How many rotated files a reader looks for (more than the daemon keeps by default). */
const MAX_ROTATED = 9;

/** Where a reader of the current file stopped: its inode, and the byte after the last whole line. */
export interface ReadPosition {
  ino: number | undefined;
  offset: number;
}

/**
 * Every entry in `file` and its rotated copies, oldest first; lines that are not entries are
 * counted. `position` is where following should go on, so that nothing written meanwhile is
 * lost (an unfinished last line is left for the follower).
 */
export async function readDecisions(
  file: string,
): Promise<{ entries: Decision[]; bad: number; position: ReadPosition }> {
  const entries: Decision[] = [];
  let bad = 0;
  let position: ReadPosition = { ino: undefined, offset: 0 };
  for (let i = MAX_ROTATED; i >= 0; i--) {
    let text: string;
    if (i === 0) {
      const current = await readCurrent(file);
      position = current.position;
      text = current.text;
    } else text = await readFile(`${file}.${i}`, 'utf8').catch(missingAsEmpty);
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const entry = parseDecision(line);
      if (entry) entries.push(entry);
      else bad++;
    }
  }
  return { entries, bad, position };
}

/** The current file's whole lines, and where they end. */
async function readCurrent(file: string): Promise<{ text: string; position: ReadPosition }> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    missingAsEmpty(err);
    return { text: '', position: { ino: undefined, offset: 0 } };
  }
  try {
    const { ino } = await handle.stat();
    const bytes = await handle.readFile();
    const end = bytes.lastIndexOf(10) + 1;
    return { text: bytes.subarray(0, end).toString('utf8'), position: { ino, offset: end } };
  } finally {
    await handle.close();
  }
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
 * Calls `onEntry` for each entry appended to `file` after `from` (where `readDecisions` stopped),
 * across rotations, until `stop` resolves. Watches the directory, so a file that is rotated away or not yet created is followed.
 */
export async function followDecisions(
  file: string,
  from: ReadPosition,
  onEntry: (d: Decision) => void,
  stop: Promise<void>,
): Promise<void> {
  let { offset, ino } = from;
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
  // What was written between the first read and the watch has no event of its own.
  reading = reading.then(readMore, readMore);
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
