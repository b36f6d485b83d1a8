import t from 'tap';
import { Writable } from 'node:stream';
import { makeLogger, type LogFormat, type LogLevel } from '../../daemon/logger.js';

/** A logger writing into an array of lines. */
function capture(format: LogFormat, level: LogLevel = 'info') {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { log: makeLogger({ format, level, stream }), lines };
}

void t.test('levels below the chosen one are dropped', async (t) => {
  const { log, lines } = capture('journal', 'warn');
  log.debug('d');
  log.info('i');
  log.warn('w');
  log.error('e');
  await log.flush();
  t.same(lines, ['<4>w', '<3>e']);
});

void t.test('a message cannot forge a line of its own in any format', async (t) => {
  for (const format of ['text', 'journal', 'json'] as const) {
    const { log, lines } = capture(format);
    log.warn('denied read for /home/a/x\n<3>forged line', { path: 'p\r\nq' });
    await log.flush();
    t.equal(lines.length, 1, `${format}: one line`);
    t.notMatch(lines[0], /\n|\r/, `${format}: no raw line break`);
    if (format === 'json') {
      const entry = JSON.parse(lines[0] ?? '') as Record<string, string>;
      t.equal(entry.message, 'denied read for /home/a/x\n<3>forged line', 'json keeps the text');
      t.equal(entry.level, 'warn');
      t.equal(entry.path, 'p\r\nq');
    } else t.match(lines[0], 'x\\n<3>forged line path=p\\r\\nq');
  }
});

void t.test('text lines carry a timestamp, the level and the fields', async (t) => {
  const { log, lines } = capture('text');
  log.info('policy loaded', { roots: 3, file: '/p.yaml' });
  await log.flush();
  t.match(
    lines[0],
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info {2}policy loaded roots=3 file=\/p\.yaml$/,
  );
});
