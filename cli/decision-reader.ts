/** Reading the daemon's decision log: the rotated files oldest first, then following the current one. */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { errnoCode, RootsError } from '../common/errors.js';
import { type Decision } from '../common/decision.js';
import { asDecision } from './decision-shape.js';
import {
  FOLLOW_CHUNK_BYTES,
  MAX_LOG_READ_BYTES,
  openLog,
  readRange,
  shownPath,
  type OpenLog,
} from './log-file.js';

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
 * lost (an unfinished last line is left for the follower). At most `MAX_LOG_READ_BYTES` are
 * read, the newest; `skipped` is how many older bytes were left out.
 */
export async function readDecisions(file: string): Promise<{
  entries: Decision[];
  bad: number;
  position: ReadPosition;
  skipped: number;
}> {
  // Opened oldest first, as the daemon renames them, then each read up to its size when opened.
  const opened: (OpenLog | undefined)[] = [];
  try {
    for (let i = MAX_ROTATED; i >= 0; i--)
      opened.push(await openLog(i === 0 ? file : `${file}.${i}`));
    // The budget goes to the newest bytes first.
    let budget = MAX_LOG_READ_BYTES;
    let skipped = 0;
    const texts: string[] = [];
    let position: ReadPosition = { ino: undefined, offset: 0 };
    for (let k = opened.length - 1; k >= 0; k--) {
      const log = opened[k];
      if (log === undefined) continue;
      const take = Math.min(log.size, budget);
      budget -= take;
      skipped += log.size - take;
      const start = log.size - take;
      let bytes = await readRange(log.handle, start, log.size);
      // Begun inside a line: that line's head was left out, and so is its tail.
      const cut = take < log.size ? afterFirstLine(bytes) : 0;
      bytes = bytes.subarray(cut);
      let end = bytes.length;
      if (k === opened.length - 1) {
        end = bytes.lastIndexOf(10) + 1;
        position = { ino: log.ino, offset: start + cut + end };
      }
      texts.unshift(bytes.subarray(0, end).toString('utf8'));
    }
    const entries: Decision[] = [];
    let bad = 0;
    for (const text of texts) {
      for (const line of text.split('\n')) {
        if (line === '') continue;
        const entry = parseDecision(line);
        if (entry) entries.push(entry);
        else bad++;
      }
    }
    return { entries, bad, position, skipped };
  } finally {
    await Promise.all(opened.map((o) => o?.handle.close() ?? Promise.resolve()));
  }
}

/** One line as an entry, or undefined for anything else (a torn last line, another program's text). */
export function parseDecision(line: string): Decision | undefined {
  try {
    return asDecision(JSON.parse(line));
  } catch {
    return undefined;
  }
}

/**
 * Calls `onEntry` for each entry appended to `file` after `from` (where `readDecisions` stopped),
 * across rotations, until `stop` resolves. Watches the directory, so a file that is rotated away
 * or not yet created is followed. Ends with an error when the file becomes one `log` does not
 * read (log-file.ts); more than `MAX_LOG_READ_BYTES` appended at once is skipped to its newest
 * bytes, and an unfinished line longer than that is dropped, so memory stays bounded either way
 * (`onSkip` is told how many bytes were left out).
 */
export async function followDecisions(
  file: string,
  from: ReadPosition,
  onEntry: (d: Decision) => void,
  stop: Promise<void>,
  onSkip: (bytes: number) => void = () => undefined,
): Promise<void> {
  let { offset, ino } = from;
  let partial = '';
  /** Whether the bytes up to the next newline are the tail of a line left out. */
  let dropping = false;
  // Pieces may end inside a character: the decoder keeps its first bytes for the next piece.
  let decoder = new StringDecoder('utf8');
  let reading: Promise<void> = Promise.resolve();
  const readMore = async (): Promise<void> => {
    const log = await openLog(file);
    if (log === undefined) return;
    try {
      if (log.ino !== ino || log.size < offset) {
        // Rotated: the old file's tail was read on its last change; the new one starts at 0.
        ino = log.ino;
        offset = 0;
        partial = '';
        dropping = false;
        decoder = new StringDecoder('utf8');
      }
      if (log.size - offset > MAX_LOG_READ_BYTES) {
        onSkip(log.size - MAX_LOG_READ_BYTES - offset);
        offset = log.size - MAX_LOG_READ_BYTES;
        partial = '';
        dropping = true;
        decoder = new StringDecoder('utf8');
      }
      while (offset < log.size) {
        let bytes = await readRange(
          log.handle,
          offset,
          Math.min(log.size, offset + FOLLOW_CHUNK_BYTES),
        );
        if (bytes.length === 0) break;
        offset += bytes.length;
        if (dropping) {
          // The tail of a line whose head was left out is not an entry.
          const cut = afterFirstLine(bytes);
          dropping = cut === bytes.length && bytes[cut - 1] !== 10;
          bytes = bytes.subarray(cut);
        }
        const lines = (partial + decoder.write(bytes)).split('\n');
        partial = lines.pop() ?? '';
        if (partial.length > MAX_LOG_READ_BYTES) {
          onSkip(Buffer.byteLength(partial));
          partial = '';
          dropping = true;
        }
        for (const line of lines) {
          const entry = parseDecision(line);
          if (entry) onEntry(entry);
        }
      }
    } finally {
      await log.handle.close();
    }
  };
  let failed: (err: unknown) => void = () => undefined;
  const failure = new Promise<never>((_, reject) => (failed = reject));
  const readAgain = (): void => {
    reading = reading.then(readMore).catch((err: unknown) => failed(err));
  };
  const name = basename(file);
  let watcher: FSWatcher;
  try {
    watcher = watch(dirname(file), (_event, changed) => {
      if (changed !== null && changed !== name) return;
      readAgain();
    });
  } catch (err) {
    throw new RootsError(
      'PATH_INVALID',
      `cannot watch ${shownPath(dirname(file))} for the decision log (${errnoCode(err) ?? String(err)}). Check that the directory exists and is yours.`,
    );
  }
  watcher.on('error', (err) => failed(err));
  // What was written between the first read and the watch has no event of its own.
  readAgain();
  try {
    await Promise.race([stop, failure]);
  } finally {
    watcher.close();
    await reading.catch(() => undefined);
  }
}

/** Where the bytes after the first newline start (the end, when there is none). */
function afterFirstLine(bytes: Buffer): number {
  const nl = bytes.indexOf(10);
  return nl === -1 ? bytes.length : nl + 1;
}
