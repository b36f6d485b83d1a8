/** One JSON-RPC message per line: split incoming bytes on `\n`, cap line length, encode outgoing messages. */
import { isAscii, isUtf8 } from 'node:buffer';

/** The default cap on one incoming line, in bytes (docs/protocol.md: 1 MiB for what the daemon reads). */
export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;

/** What the client side accepts (docs/protocol.md: answers up to 64 MiB). */
export const CLIENT_MAX_LINE_BYTES = 64 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;

/** The result of one `push`: the lines completed by this chunk, and whether the cap was passed. */
export interface FramedLines {
  lines: string[];
  /** True on the one push where a line passed the cap; nothing is returned after that. */
  overflow: boolean;
}

/** Options for `LineFramer`. */
export interface LineFramerOptions {
  /** Longest accepted line in bytes, without its `\n` (default 1 MiB). */
  maxLineBytes?: number;
}

/** Splits a byte stream into UTF-8 lines on the `\n` byte, enforcing a byte cap as bytes arrive. */
export class LineFramer {
  readonly maxLineBytes: number;
  // Pieces of the current unfinished line: kept apart and joined once, when its `\n` arrives.
  private chunks: Buffer[] = [];
  private pending = 0;
  private overflowed = false;

  constructor(options: LineFramerOptions = {}) {
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  /** Bytes of the unfinished line held so far. */
  get pendingBytes(): number {
    return this.pending;
  }

  /** Whether a line has passed the cap (the framer then ignores everything). */
  get hasOverflowed(): boolean {
    return this.overflowed;
  }

  /** Feed a chunk; returns the lines it completes (without `\n` or a trailing `\r`). Keeps a view of `chunk`: do not reuse it. */
  push(chunk: Buffer): FramedLines {
    const { lines, overflow } = this.pushBytes(chunk);
    return { lines: lines.map(decodeLine), overflow };
  }

  /** `push`, with each line's bytes rather than its text (views of the chunks: not written to). */
  pushBytes(chunk: Buffer): { lines: Buffer[]; overflow: boolean } {
    if (this.overflowed) return { lines: [], overflow: false };
    const lines: Buffer[] = [];
    let start = 0;
    let nl = chunk.indexOf(LF, start);
    while (nl !== -1) {
      const length = this.pending + (nl - start);
      if (length > this.maxLineBytes) return this.overflow(lines);
      if (this.chunks.length === 0) {
        // The usual case, a whole line in one chunk: one view, without its `\r`.
        const end = nl > start && chunk[nl - 1] === CR ? nl - 1 : nl;
        lines.push(chunk.subarray(start, end));
      } else {
        this.chunks.push(chunk.subarray(start, nl));
        const line = Buffer.concat(this.chunks, length);
        this.chunks = [];
        this.pending = 0;
        const end = line.length > 0 && line[line.length - 1] === CR ? line.length - 1 : line.length;
        lines.push(end === line.length ? line : line.subarray(0, end));
      }
      start = nl + 1;
      nl = chunk.indexOf(LF, start);
    }
    if (start < chunk.length) {
      this.pending += chunk.length - start;
      // Enforced before any newline, so a peer cannot make us buffer an endless line.
      if (this.pending > this.maxLineBytes) return this.overflow(lines);
      this.chunks.push(start === 0 ? chunk : chunk.subarray(start));
    }
    return { lines, overflow: false };
  }

  private overflow(lines: Buffer[]): { lines: Buffer[]; overflow: boolean } {
    this.overflowed = true;
    this.chunks = [];
    this.pending = 0;
    return { lines, overflow: true };
  }
}

/**
 * A line's text. Bytes all below 0x80 read the same as UTF-8 and as Latin-1, and Latin-1 is a
 * copy into a one-byte string while UTF-8 is decoded byte by byte: for a list of 100,000 roots
 * (9.7 MB, all ASCII) 2–4 ms against 45–70 ms here (bench/FINDINGS.md, eleventh step). Any other
 * byte takes the UTF-8 decoder, which turns what is not UTF-8 into U+FFFD as before.
 */
export function decodeLine(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

/**
 * `decodeLine`, or undefined when the line is not UTF-8: JSON text must be (RFC 8259, 8.1), and
 * decoded with U+FFFD in place of the bytes, a path would be judged that nobody sent.
 */
export function lineText(bytes: Buffer): string | undefined {
  return isAscii(bytes) || isUtf8(bytes) ? decodeLine(bytes) : undefined;
}
