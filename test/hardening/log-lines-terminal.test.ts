/**
 * The daemon's log (daemon/logger.ts) and the proxy's (proxy/log.ts) carry names nobody checked:
 * a directory an agent made under a glob base, a URI a server sent. Both reach a terminal raw when
 * `mcp-rootsd` runs in the foreground, a host shows the proxy's stderr, or `journalctl` prints
 * them. Attacked with ESC (CSI, OSC 52), the 8-bit CSI U+009B, CR, U+2028, U+0085 and a bidi
 * override in the message, in a field, in a server's name, in every format: **was a hole:** the
 * daemon escaped only C0 and DEL (its json format nothing past what JSON.stringify does) and the
 * proxy escaped nothing.
 */
import t from 'tap';
import { makeLogger, type LogFormat } from '../../daemon/logger.js';
import { makeProxyLogger } from '../../proxy/log.js';
import { ACTED_ON_RAW } from '../helpers/terminal-controls.js';

const HOSTILE = 'a\u001b]52;c;ZXZpbA==\u0007b\u009b31m\r\u2028\u0085\u202etxt.exe\u001b[31m';

function collect(): { stream: { write(s: string, cb?: () => void): boolean }; text: () => string } {
  let all = '';
  return {
    stream: {
      write(s: string, cb?: () => void) {
        all += s;
        cb?.();
        return true;
      },
    },
    text: () => all,
  };
}

void t.test('the daemon log shows a hostile name escaped, in every format', async (t) => {
  for (const format of ['text', 'journal', 'json'] as LogFormat[]) {
    const out = collect();
    const log = makeLogger({ format, stream: out.stream as unknown as NodeJS.WritableStream });
    log.warn(`watching ${HOSTILE}`, { path: HOSTILE, list: [HOSTILE] });
    await log.flush();
    const text = out.text();
    t.notMatch(text, ACTED_ON_RAW, `${format}: nothing a terminal acts on`);
    t.equal(text.split('\n').length, 2, `${format}: one line`);
    if (format === 'json') {
      const entry = JSON.parse(text) as { message: string; path: string };
      t.equal(entry.path, HOSTILE, 'json: the same name when read back');
    }
  }
});

void t.test('the proxy log shows a hostile URI and server name escaped', (t) => {
  const out = collect();
  const log = makeProxyLogger(`srv${HOSTILE}`, 'debug', out.stream);
  log.info(`dropped the server's notifications/resources/updated: file:///${HOSTILE}`);
  const text = out.text();
  t.notMatch(text, ACTED_ON_RAW, 'nothing a terminal acts on');
  t.equal(text.split('\n').length, 2, 'one line');
  t.match(text, /\\u001b\]52;c;/, 'the OSC 52 shown as an escape');
  t.end();
});
