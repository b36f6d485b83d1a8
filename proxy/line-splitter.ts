/** Split a byte stream into lines on the `\n` byte, keeping each line's exact bytes, up to a cap. */

const LF = 0x0a;
const MIB = 2 ** 20;

/**
 * The longest line the proxy takes from the host: what the TypeScript SDK's stdio reader (v1 and
 * v2, `STDIO_DEFAULT_MAX_BUFFER_SIZE`) takes, so a server on it could not have read a longer one.
 */
export const HOST_LINE_CAP = 10 * MIB;
/** The longest line the proxy takes from the server: a file read's answer can be large. */
export const SERVER_LINE_CAP = 64 * MIB;

/** How much of a line over the cap is kept: enough to read its id and method from. */
export const OVERLONG_HEAD = 64 * 1024;

/** A line longer than the cap: its first and last bytes and its length; the rest was never kept. */
export interface OverlongLine {
  head: Buffer;
  /** The last OVERLONG_HEAD bytes: an SDK may write an answer's id after its result. */
  tail: Buffer;
  bytes: number;
}

/** What the splitter cuts: a line's exact bytes, or an over-long line's head. */
export type SplitLine = Buffer | OverlongLine;

/** The last OVERLONG_HEAD bytes of `kept` followed by `part`. */
function lastBytes(kept: Buffer, part: Buffer): Buffer {
  if (part.length >= OVERLONG_HEAD) return part.subarray(part.length - OVERLONG_HEAD);
  const both = Buffer.concat([kept, part]);
  return both.subarray(Math.max(0, both.length - OVERLONG_HEAD));
}

export const isOverlong = (line: SplitLine): line is OverlongLine => !Buffer.isBuffer(line);

/**
 * MCP's stdio framing as the proxy needs it: unlike `LineFramer` (which decodes and drops a
 * trailing `\r`), each line comes back as the bytes that arrived, so a relayed line is
 * byte-for-byte the original. A line longer than `cap` is not held: its first `OVERLONG_HEAD`
 * bytes are, and the rest is counted until its newline, so no sender can make the proxy buffer
 * more than `cap` bytes, however long it writes without one.
 */
export class LineSplitter {
  private chunks: Buffer[] = [];
  private pending = 0;
  /** The head of the line being dropped, once it has passed the cap. */
  private overlong: OverlongLine | undefined;

  /** `cap`: the longest line held, in bytes (none by default, for lines the proxy wrote itself). */
  constructor(private readonly cap = Number.POSITIVE_INFINITY) {}

  /** Feed a chunk; returns the lines it completes, without their `\n`. */
  push(chunk: Buffer): SplitLine[] {
    const lines: SplitLine[] = [];
    let start = 0;
    let nl = chunk.indexOf(LF, start);
    while (nl !== -1) {
      this.add(chunk.subarray(start, nl));
      lines.push(this.take()!);
      start = nl + 1;
      nl = chunk.indexOf(LF, start);
    }
    if (start < chunk.length) this.add(start === 0 ? chunk : chunk.subarray(start));
    return lines;
  }

  /** What is left when the stream ends: an unterminated last line, if any. */
  end(): SplitLine | undefined {
    return this.pending === 0 && this.overlong === undefined ? undefined : this.take();
  }

  /** Part of the current line. */
  private add(part: Buffer): void {
    const over = this.overlong;
    if (over !== undefined) {
      over.bytes += part.length;
      const room = OVERLONG_HEAD - over.head.length;
      if (room > 0) over.head = Buffer.concat([over.head, part.subarray(0, room)]);
      over.tail = lastBytes(over.tail, part);
      return;
    }
    if (this.pending + part.length <= this.cap) {
      this.chunks.push(part);
      this.pending += part.length;
      return;
    }
    // Past the cap: keep the head, forget the rest.
    const held = Buffer.concat([...this.chunks, part.subarray(0, OVERLONG_HEAD)]);
    this.overlong = {
      head: held.subarray(0, OVERLONG_HEAD),
      tail: lastBytes(Buffer.alloc(0), held),
      bytes: this.pending + part.length,
    };
    this.chunks = [];
    this.pending = 0;
  }

  /** The current line, complete; the splitter starts the next. */
  private take(): SplitLine | undefined {
    const over = this.overlong;
    if (over !== undefined) {
      this.overlong = undefined;
      // A copy: the head must not keep a whole chunk of the dropped line alive.
      return { head: Buffer.from(over.head), tail: Buffer.from(over.tail), bytes: over.bytes };
    }
    const line =
      this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.pending);
    this.chunks = [];
    this.pending = 0;
    return line;
  }
}
