/**
 * Where the links on the policy's paths led, kept in the state directory across restarts
 * (docs/policy.md, "Symlinks"). The pins lived in memory only, so a restart (a login, an
 * upgrade, a crash) followed every link as it stood: a server that may write where another
 * server's root is a link re-pointed it, the running daemon refused it, and the next start gave
 * the other server the link's new target (**was a hole**, an attacker pass). Only `rootsctl
 * reload` (the person's word) follows links afresh now. The state directory is a protected path:
 * no server may write it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errnoCode, ignoreMissing } from '../common/errors.js';
import type { LinkPins } from '../policies/index.js';
import { writeAtomically } from './write-atomically.js';
import type { Logger } from './logger.js';

export const PINS_FILE = 'link-pins.json';

/** The pins as the file holds them. */
const textOf = (pins: LinkPins): string => `${JSON.stringify(pins.entries(), null, 1)}\n`;

/** The pins `text` holds: a JSON array of `[written, canonical]` pairs; undefined if not. */
function parsePins(text: string): [string, string][] | undefined {
  const isPair = (e: unknown): e is [string, string] =>
    Array.isArray(e) && e.length === 2 && e.every((x) => typeof x === 'string');
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) && value.every(isPair) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The pins file of a state directory: read once at start, written when the pins change. */
export class PinsFile {
  private readonly file: string;
  /** What the file holds, as far as known: no pins until one is read or written. */
  private written = '[]\n';
  private writing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    stateDir: string,
    private readonly log: Logger,
  ) {
    this.file = join(stateDir, PINS_FILE);
  }

  /** Restore the pins kept into `pins`; a file that cannot be read is said, and not used. */
  async load(pins: LinkPins): Promise<void> {
    const fallback = "links on the policy's paths are followed as they are now";
    let text: string | undefined;
    try {
      text = await ignoreMissing(readFile(this.file, 'utf8'));
    } catch (err) {
      this.log.warn(`cannot read ${this.file} (${errnoCode(err) ?? String(err)}): ${fallback}`);
      return;
    }
    if (text === undefined) return;
    const entries = parsePins(text);
    if (entries === undefined) {
      this.log.warn(`${this.file} is not a list of pins (written by mcp-rootsd): ${fallback}`);
      this.written = text;
      return;
    }
    pins.restore(entries);
    this.written = textOf(pins);
  }

  /** Keep `pins` as they are now (after a resolution) when they changed; one write at a time. */
  save(pins: LinkPins): void {
    const text = textOf(pins);
    if (this.closed || text === this.written) return;
    this.written = text;
    this.writing = this.writing.then(() =>
      // Into the state directory the daemon made at start: not made again if it has gone.
      writeAtomically(this.file, text, { makeDir: false }).catch(() => {
        this.written = '';
        this.log.warn(
          `cannot write ${this.file}: where the policy's links lead is not kept, and a restart would follow them as they are then`,
        );
      }),
    );
  }

  /** Write nothing more; resolves once every write asked for has ended (the daemon's stop). */
  close(): Promise<void> {
    this.closed = true;
    return this.writing;
  }
}
