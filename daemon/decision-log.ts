/**
 * The decision log: JSON lines in the state directory, bounded by size and rotated.
 *
 * Answers must not wait for the disk: `record` only queues a line, and one write appends
 * whatever has queued within `BATCH_MS`. A write per decision (per turn of the event loop)
 * cost each `roots/check` a hop through libuv's thread pool, about half of the daemon's CPU
 * time for a check, and on a busy machine the process that asked waits for that time too
 * (bench/FINDINGS.md, "What a checked call pays for"). The file is the person's own record (mode 0600, never
 * followed through a link) and holds paths, never file contents.
 */
import { constants } from 'node:fs';
import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from './logger.js';
import type { DecisionInput } from '../common/decision.js';

export interface DecisionLogOptions {
  file: string;
  /** Rotate once the file would grow past this many bytes. */
  maxBytes: number;
  /** Rotated files kept beside the current one (`.1` newest … `.keep` oldest). */
  keep: number;
  log: Logger;
  /**
   * Throws unless the state directory is still the one checked at start (daemon/state-dir.ts):
   * what was allowed and refused is not written into a directory put in its place.
   */
  verifyDir?: () => Promise<void>;
  now?: () => number;
}

/** Where decisions go; the daemon's parts depend on this, not on the file. */
export interface DecisionSink {
  record(entry: DecisionInput): void;
}

/** A sink that keeps nothing (the log switched off). */
export const NO_DECISIONS: DecisionSink = { record: () => undefined };

/** Default size of one log file, and how many rotated files stay. */
export const DEFAULT_DECISION_LOG_BYTES = 10 * 1024 * 1024;
export const DEFAULT_DECISION_LOG_KEEP = 3;
/** How long a decision may wait to be written with the ones after it. */
export const BATCH_MS = 50;

const OPEN_FLAGS =
  constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

/** A decision waiting for the batch's write: turned into its line only then. */
interface Queued {
  time: number;
  entry: DecisionInput;
}

export class DecisionLog implements DecisionSink {
  private queue: Queued[] = [];
  private handle: FileHandle | undefined;
  private size = 0;
  private writing: Promise<void> | undefined;
  /** Ends the batch window early (`flush`, `close`). */
  private writeNow: (() => void) | undefined;
  private closed = false;
  /** Set after a write failed: said once in the daemon's log, not once per decision. */
  private failing = false;
  private readonly now: () => number;

  constructor(private readonly opts: DecisionLogOptions) {
    this.now = opts.now ?? Date.now;
  }

  /**
   * Queue `entry` (which its caller no longer changes): its line is made with the batch's write,
   * not here, so that the answer the decision goes with is not written after it.
   */
  record(entry: DecisionInput): void {
    if (this.closed) return;
    this.queue.push({ time: this.now(), entry });
    this.writing ??= new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.writeNow?.(), BATCH_MS);
      this.writeNow = () => {
        clearTimeout(timer);
        this.writeNow = undefined;
        resolve();
      };
    }).then(() => this.drain());
  }

  /** Everything recorded so far is on disk (tests, and before the daemon exits). */
  async flush(): Promise<void> {
    while (this.writing) {
      this.writeNow?.();
      await this.writing;
    }
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    await this.handle?.close().catch(() => undefined);
    this.handle = undefined;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        let data = '';
        for (const { time, entry } of this.queue)
          data += `${JSON.stringify({ time: new Date(time).toISOString(), ...entry })}\n`;
        this.queue = [];
        await this.append(data);
      }
      this.failing = false;
    } catch (err) {
      if (!this.failing) {
        this.opts.log.warn(
          `cannot write the decision log ${this.opts.file}: ${(err as Error).message.replace(/\.$/, '')}; decisions are not recorded until it can`,
        );
      }
      this.failing = true;
      this.queue = [];
      await this.handle?.close().catch(() => undefined);
      this.handle = undefined;
    } finally {
      this.writing = undefined;
    }
  }

  private async append(data: string): Promise<void> {
    const bytes = Buffer.byteLength(data);
    // Each batch, not only at open: the open file outlives its directory, and decisions written
    // into a removed or replaced state directory would be lost without a word. Two lstats per
    // batch (at most one batch per BATCH_MS).
    if (this.handle !== undefined) await this.opts.verifyDir?.();
    else await this.openFile();
    if (this.size > 0 && this.size + bytes > this.opts.maxBytes) {
      await this.rotate();
      await this.openFile();
    }
    await this.handle!.write(data);
    this.size += bytes;
  }

  private async openFile(): Promise<void> {
    await this.opts.verifyDir?.();
    await mkdir(dirname(this.opts.file), { recursive: true, mode: 0o700 });
    const handle = await open(this.opts.file, OPEN_FLAGS, 0o600);
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) throw new Error('not a regular file');
      // A file left with looser permissions (copied in, restored) becomes private again.
      if ((stat.mode & 0o077) !== 0) await handle.chmod(0o600);
      this.size = stat.size;
      this.handle = handle;
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /** `file` → `file.1` → … → `file.keep`; the oldest falls off. */
  private async rotate(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
    const { file, keep } = this.opts;
    await rm(`${file}.${keep}`, { force: true });
    for (let i = keep - 1; i >= 1; i--) {
      await rename(`${file}.${i}`, `${file}.${i + 1}`).catch(ignoreMissingFile);
    }
    if (keep > 0) await rename(file, `${file}.1`).catch(ignoreMissingFile);
    else await rm(file, { force: true });
    this.size = 0;
  }
}

function ignoreMissingFile(err: unknown): void {
  if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
}
