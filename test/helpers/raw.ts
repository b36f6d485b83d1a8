/** A raw line client: bytes in, parsed JSON lines out, for protocol tests below RootsClient. */
import { createConnection, type Socket } from 'node:net';

export interface RawClient {
  socket: Socket;
  /** Write raw bytes or a string. */
  send(data: string | Buffer): void;
  /** The next parsed line (waits up to `ms`). */
  next(ms?: number): Promise<Record<string, unknown>>;
  /** Resolves when the daemon closes the connection. */
  closed: Promise<void>;
  close(): void;
}

/** Connect to a socket and read newline-delimited JSON. */
export function rawConnect(path: string): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ path });
    const lines: Record<string, unknown>[] = [];
    const waiters: ((v: Record<string, unknown>) => void)[] = [];
    let buf = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10)) {
        const line = JSON.parse(buf.subarray(0, i).toString('utf8')) as Record<string, unknown>;
        buf = buf.subarray(i + 1);
        const w = waiters.shift();
        if (w) w(line);
        else lines.push(line);
      }
    });
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('error', reject);
    socket.once('connect', () =>
      resolve({
        socket,
        send: (data) => socket.write(data),
        next: (ms = 30_000) =>
          new Promise((res, rej) => {
            const ready = lines.shift();
            if (ready) return res(ready);
            const timer = setTimeout(() => rej(new Error(`no line within ${ms} ms`)), ms);
            waiters.push((v) => {
              clearTimeout(timer);
              res(v);
            });
          }),
        closed,
        close: () => socket.destroy(),
      }),
    );
  });
}
