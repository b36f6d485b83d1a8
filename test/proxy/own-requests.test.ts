/**
 * The proxy's own requests: an error answer rejects with words a log line can show (the code and
 * the server's message, quoted), not the error object's JSON.
 */
import t from 'tap';
import { OwnRequests } from '../../proxy/own-requests.js';

void t.test('an error answer reads as the code and the quoted message', async (t) => {
  const sent: string[] = [];
  const own = new OwnRequests((line) => sent.push(line), 10_000);
  const asked = own.request('tools/list', {});
  const id = (JSON.parse(sent[0]!) as { id: string }).id;
  own.settle({ jsonrpc: '2.0', id, error: { code: -32603, message: 'Internal error\n[x]' } });
  await t.rejects(asked, {
    message: 'the server answered error -32603: "Internal error\\n[x]"',
  });
  // Any other shape: its JSON.
  const odd = own.request('tools/list', {});
  const id2 = (JSON.parse(sent[1]!) as { id: string }).id;
  own.settle({ jsonrpc: '2.0', id: id2, error: 'broken' });
  await t.rejects(odd, { message: '"broken"' });
});
