/**
 * The host's input is paused while the server's input is full, and read again once it has room,
 * or once it never will: a server stopped by a restart with its input full closes without a
 * 'drain', and the host's later messages (for the server that replaced it) were never read.
 */
import { PassThrough, Writable } from 'node:stream';
import t from 'tap';
import { writeLine } from '../../proxy/line-writer.js';

/** A server input that takes nothing in until `take` (a server busy, or stopping). */
function stuckInput(): { out: Writable; take: () => void } {
  let pending: (() => void)[] = [];
  let taking = false;
  const out = new Writable({
    highWaterMark: 16,
    write: (_chunk, _enc, done) => (taking ? done() : pending.push(done)),
  });
  const take = () => {
    taking = true;
    for (const done of pending) done();
    pending = [];
  };
  return { out, take };
}

void t.test('paused while full, read again on drain', async (t) => {
  const host = new PassThrough();
  host.resume();
  const { out, take } = stuckInput();
  writeLine(out, 'x'.repeat(100), host);
  t.equal(host.isPaused(), true, 'the host is not read while the server is full');
  take();
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(host.isPaused(), false, 'read again once the server took it');
});

void t.test('paused while full, read again once that input closes', async (t) => {
  const host = new PassThrough();
  host.resume();
  const { out } = stuckInput();
  writeLine(out, 'x'.repeat(100), host);
  t.equal(host.isPaused(), true);
  out.destroy(); // the old server stopped (EPIPE) and was replaced
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(host.isPaused(), false, 'the host is read again: its messages go to the new server');
});
