import t from 'tap';
import { LineFramer } from '../../protocol/framer.js';
import { notificationLine } from '../../protocol/messages.js';
import { jsonText } from '../../protocol/raw-json.js';

void t.test('a multi-byte character cut across two pushes decodes whole', (t) => {
  const framer = new LineFramer();
  const bytes = Buffer.from('{"name":"€uro"}\n', 'utf8');
  const cut = bytes.indexOf(0xe2) + 2; // inside the three bytes of '€'
  t.same(framer.push(bytes.subarray(0, cut)), { lines: [], overflow: false });
  t.equal(framer.pendingBytes, cut);
  t.same(framer.push(bytes.subarray(cut)), { lines: ['{"name":"€uro"}'], overflow: false });
  t.equal(framer.pendingBytes, 0);
  t.end();
});

void t.test('a line cut across many pushes, one byte at a time', (t) => {
  const framer = new LineFramer();
  const bytes = Buffer.from('añb😀c\n', 'utf8');
  const lines: string[] = [];
  for (let i = 0; i < bytes.length; i++) lines.push(...framer.push(bytes.subarray(i, i + 1)).lines);
  t.same(lines, ['añb😀c']);
  t.end();
});

void t.test('many lines in one chunk, with the rest kept for the next push', (t) => {
  const framer = new LineFramer();
  t.same(framer.push(Buffer.from('a\nbb\n\nccc\ndd')).lines, ['a', 'bb', '', 'ccc']);
  t.same(framer.push(Buffer.from('d\n')).lines, ['ddd']);
  t.end();
});

void t.test('\\r\\n line ends lose their \\r; a lone \\r inside a line stays', (t) => {
  const framer = new LineFramer();
  t.same(framer.push(Buffer.from('one\r\ntw\ro\r')).lines, ['one']);
  t.same(framer.push(Buffer.from('\n')).lines, ['tw\ro']);
  t.end();
});

void t.test('the cap is enforced as bytes arrive, before any newline, and reported once', (t) => {
  const framer = new LineFramer({ maxLineBytes: 10 });
  t.same(framer.push(Buffer.from('0123456789\n')).lines, ['0123456789'], 'exactly the cap is fine');
  t.same(framer.push(Buffer.from('012345')), { lines: [], overflow: false });
  t.same(framer.push(Buffer.from('6789A')), { lines: [], overflow: true }, 'no newline yet');
  t.ok(framer.hasOverflowed);
  t.same(framer.push(Buffer.from('\n{}\n')), { lines: [], overflow: false }, 'reported once');
  t.end();
});

void t.test('lines completed before an over-cap line in the same chunk are returned', (t) => {
  const framer = new LineFramer({ maxLineBytes: 4 });
  t.same(framer.push(Buffer.from('ok\ntoo long\nlater\n')), { lines: ['ok'], overflow: true });
  t.end();
});

void t.test('the default cap is 1 MiB', (t) => {
  const framer = new LineFramer();
  t.equal(framer.maxLineBytes, 1024 * 1024);
  t.equal(framer.push(Buffer.alloc(1024 * 1024, 0x20)).overflow, false);
  t.equal(framer.push(Buffer.from('x')).overflow, true);
  t.end();
});

void t.test('a built message is one line of JSON, even with newlines in strings', (t) => {
  const line = notificationLine('x', jsonText({ s: 'a\nb\u2028' })) + '\n';
  t.equal(line.indexOf('\n'), line.length - 1);
  t.same(JSON.parse(line), { jsonrpc: '2.0', method: 'x', params: { s: 'a\nb\u2028' } });
  const framer = new LineFramer();
  t.same(
    framer.push(Buffer.from(line + line)).lines.map((l) => JSON.parse(l) as unknown).length,
    2,
  );
  t.end();
});

void t.test('a line all in ASCII and one with bytes that are not UTF-8 read as UTF-8 does', (t) => {
  const framer = new LineFramer();
  const ascii = Buffer.from(Array.from({ length: 128 }, (_, i) => (i === 10 ? 32 : i)));
  const broken = Buffer.from([0x61, 0xff, 0xe2, 0x82, 0x62, 0xc3, 0xa9]);
  const { lines } = framer.push(
    Buffer.concat([ascii, Buffer.from('\n'), broken, Buffer.from('\n')]),
  );
  t.same(lines, [ascii.toString('utf8'), broken.toString('utf8')]);
  t.equal(lines[1], 'a\uFFFD\uFFFDbé');
  t.end();
});
