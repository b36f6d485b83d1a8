/**
 * One request to a server that nobody listens to yet: a restarted server's `initialize` (2025 era)
 * or `server/discover` (2026-07-28), sent while the old server still finishes its calls, so that
 * the new one's start overlaps the old one's drain and stop. Whatever else the new server writes
 * meanwhile is put back on its output, unread, for the router to read once it is attached.
 */
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { idText, requestLine, type JsonObject } from '../protocol/messages.js';
import { isOverlong, LineSplitter, SERVER_LINE_CAP } from './line-splitter.js';
import { isObject, McpLine } from './mcp-line.js';

/** A server as the router talks to it: a child's pipes, or the stand-in's. */
export interface ServerEndpoint {
  serverIn: Writable;
  serverOut: Readable;
}

/** The id of the opening request; the proxy's own prefix, so no host id can be the same. */
const OPENING_ID = 'mcp-roots-proxy:opening';

/** The answer to the opening, and the server to attach (its output holding what it wrote). */
export interface Opening {
  answer: { result: unknown } | { error: Error };
  server: ServerEndpoint;
}

/**
 * Send `method` to `server`; resolves with its answer (an error for an error answer, for an output
 * that ended, after `timeoutMs`, or once `stop` aborts). The output to attach is left paused,
 * holding every byte the server wrote besides the answer; the caller resumes it once the router
 * listens. An output that ended is replaced by one that holds those bytes and then ends, so that
 * the router still sees the end.
 */
export function openServer(
  server: ServerEndpoint,
  method: string,
  params: JsonObject,
  { timeoutMs, stop }: { timeoutMs: number; stop?: AbortSignal | undefined },
): Promise<Opening> {
  const out = server.serverOut;
  const splitter = new LineSplitter(SERVER_LINE_CAP);
  const kept: Buffer[] = [];
  let keptBytes = 0;
  const keep = (bytes: Buffer): void => {
    // What a new server writes before its opening answer is held for the session: at most one
    // line's cap of it, so that a server cannot grow the proxy by writing without end meanwhile.
    keptBytes += bytes.length + 1;
    if (keptBytes <= SERVER_LINE_CAP) kept.push(bytes, Buffer.from('\n'));
  };
  return new Promise<Opening>((resolve) => {
    const finish = (answer: Opening['answer'], ended = false): void => {
      clearTimeout(timer);
      stop?.removeEventListener('abort', onStop);
      out.off('data', onData).off('end', onEnd).off('close', onEnd).off('error', onError);
      const tail = splitter.end();
      // A line over the cap is dropped here as the session would drop it.
      if (tail !== undefined && !isOverlong(tail)) kept.push(tail);
      const bytes = Buffer.concat(kept);
      if (ended) {
        const rest = new PassThrough();
        rest.end(bytes);
        rest.pause();
        return resolve({ answer, server: { serverIn: server.serverIn, serverOut: rest } });
      }
      out.pause();
      if (bytes.length > 0) out.unshift(bytes);
      resolve({ answer, server });
    };
    let answer: Opening['answer'] | undefined;
    const onData = (chunk: Buffer): void => {
      for (const bytes of splitter.push(chunk)) {
        if (isOverlong(bytes)) continue;
        const line = new McpLine(bytes);
        const msg = line.msg;
        if (
          answer !== undefined ||
          msg === undefined ||
          !line.isResponse ||
          msg.id !== OPENING_ID
        ) {
          keep(bytes);
        } else if (isObject(msg.error)) {
          const message = typeof msg.error.message === 'string' ? msg.error.message : 'an error';
          answer = { error: new Error(`${method} answered: ${message}`) };
        } else {
          answer = { result: msg.result };
        }
      }
      if (answer !== undefined) finish(answer);
    };
    const onEnd = (): void =>
      finish({ error: new Error(`the new server ended before it answered ${method}`) }, true);
    const onError = (err: Error): void => finish({ error: err });
    const timer = setTimeout(
      () => finish({ error: new Error(`no answer to ${method} in ${timeoutMs} ms`) }),
      timeoutMs,
    );
    const onStop = (): void =>
      finish({ error: new Error(`a change came before the new server answered ${method}`) });
    if (stop?.aborted === true) return onStop();
    stop?.addEventListener('abort', onStop, { once: true });
    out.on('data', onData).once('end', onEnd).once('close', onEnd).once('error', onError);
    server.serverIn.write(`${requestLine(idText(OPENING_ID), method, JSON.stringify(params))}\n`);
  });
}
