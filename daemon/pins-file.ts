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

/** The pins kept in `stateDir`, restored into `pins`; a file that cannot be read is said. */
export async function loadPins(stateDir: string, pins: LinkPins, log: Logger): Promise<void> {
  const file = join(stateDir, PINS_FILE);
  let text: string | undefined;
  try {
    text = await ignoreMissing(readFile(file, 'utf8'));
  } catch (err) {
    log.warn(
      `cannot read ${file} (${errnoCode(err) ?? String(err)}): links on the policy's paths are followed as they are now`,
    );
    return;
  }
  if (text === undefined) return;
  const entries = parsePins(text);
  if (entries === undefined) {
    log.warn(
      `${file} is not a list of pins (written by mcp-rootsd): links on the policy's paths are followed as they are now`,
    );
    return;
  }
  pins.restore(entries);
}

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

/** Writes the pins when they changed, one write at a time, in order. */
export class PinsFile {
  private written: string | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly stateDir: string,
    private readonly log: Logger,
  ) {}

  /** Keep `pins` as they are now (after a resolution); resolves once written. */
  save(pins: LinkPins): Promise<void> {
    const text = `${JSON.stringify(pins.entries(), null, 1)}\n`;
    if (text === this.written) return this.writing;
    this.written = text;
    const file = join(this.stateDir, PINS_FILE);
    this.writing = this.writing.then(() =>
      writeAtomically(file, text).catch(() => {
        this.written = undefined;
        this.log.warn(
          `cannot write ${file}: where the policy's links lead is not kept, and a restart would follow them as they are then`,
        );
      }),
    );
    return this.writing;
  }
}
