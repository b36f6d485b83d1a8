/** Split a byte stream into lines on the `\n` byte, keeping each line's exact bytes and no length cap. */

const LF = 0x0a;
const MIB = 2 ** 20;

/**
 * The longest line the proxy takes from the host: what the TypeScript SDK's stdio reader (v1 and
 * v2, `STDIO_DEFAULT_MAX_BUFFER_SIZE`) takes, so a server on it could not have read a longer one.
 */
export const HOST_LINE_CAP = 10 * MIB;
/** The longest line the proxy takes from the server: a file read's answer can be large. */
export const SERVER_LINE_CAP = 64 * MIB;

/**
 * MCP's stdio framing as the proxy needs it: unlike `LineFramer` (which decodes and drops a
 * trailing `\r`), each line comes back as the bytes that arrived, so a relayed line is
 * byte-for-byte the original. There is no cap: the proxy must pass on whatever the two sides send.
 */
export class LineSplitter {
  private chunks: Buffer[] = [];
  private pending = 0;

  /** Feed a chunk; returns the lines it completes, without their `\n`. */
  push(chunk: Buffer): Buffer[] {
    const lines: Buffer[] = [];
    let start = 0;
    let nl = chunk.indexOf(LF, start);
    while (nl !== -1) {
      if (this.chunks.length === 0) {
        lines.push(chunk.subarray(start, nl));
      } else {
        this.chunks.push(chunk.subarray(start, nl));
        lines.push(Buffer.concat(this.chunks, this.pending + nl - start));
        this.chunks = [];
        this.pending = 0;
      }
      start = nl + 1;
      nl = chunk.indexOf(LF, start);
    }
    if (start < chunk.length) {
      const rest = start === 0 ? chunk : chunk.subarray(start);
      this.chunks.push(rest);
      this.pending += rest.length;
    }
    return lines;
  }

  /** What is left when the stream ends: an unterminated last line, if any. */
  end(): Buffer | undefined {
    if (this.pending === 0) return undefined;
    const rest = Buffer.concat(this.chunks, this.pending);
    this.chunks = [];
    this.pending = 0;
    return rest;
  }
}
