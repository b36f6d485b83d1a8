import t from 'tap';
import { RootsError } from '../../common/errors.js';
import {
  fromRpcErrorObject,
  RpcCode,
  RpcError,
  toRpcErrorObject,
} from '../../protocol/rpc-errors.js';

void t.test('a RootsError is a domain error: -32000 with its code and hint', (t) => {
  const err = new RootsError('GRANT_DENIED', '/a is under a deny', { hint: 'ask the owner' });
  t.same(toRpcErrorObject(err, 'grants/add'), {
    code: -32000,
    message: '/a is under a deny',
    data: { code: 'GRANT_DENIED', hint: 'ask the owner' },
  });
  t.end();
});

void t.test('an RpcError keeps its number', (t) => {
  const err = new RpcError(RpcCode.INVALID_PARAMS, 'PATH_INVALID', 'roots/check: params.path ...');
  t.same(toRpcErrorObject(err, 'roots/check'), {
    code: -32602,
    message: 'roots/check: params.path ...',
    data: { code: 'PATH_INVALID' },
  });
  t.end();
});

void t.test('anything else is -32603 without its message or stack', (t) => {
  const wire = toRpcErrorObject(new TypeError('secret /home/ada/.ssh'), 'roots/list');
  t.equal(wire.code, -32603);
  t.notMatch(JSON.stringify(wire), /secret|TypeError|at /);
  t.match(wire.message, /internal error while handling roots\/list/);
  t.end();
});

void t.test('the wire form turns back into the same code', (t) => {
  const back = fromRpcErrorObject(
    {
      code: -32000,
      message: 'lockdown is on',
      data: { code: 'LOCKDOWN', hint: 'rootsctl unlock' },
    },
    'grants/add',
  );
  t.ok(back instanceof RootsError);
  t.equal(back.code, 'LOCKDOWN');
  t.equal(back.rpcCode, -32000);
  t.equal(back.hint, 'rootsctl unlock');
  t.equal(back.message, 'lockdown is on');
  t.end();
});

void t.test('unknown or missing data codes fall back by number', (t) => {
  const rows: [unknown, string, number][] = [
    [{ code: -32601, message: 'nope' }, 'PROTOCOL', -32601],
    [{ code: -32602, message: 'bad' }, 'USAGE', -32602],
    [{ code: -32603, message: 'oops' }, 'INTERNAL', -32603],
    [{ code: -32000, message: 'new', data: { code: 'FROM_THE_FUTURE' } }, 'INTERNAL', -32000],
    [{ code: 'x', message: 1 }, 'PROTOCOL', -32603],
    ['garbage', 'PROTOCOL', -32603],
  ];
  for (const [wire, code, rpcCode] of rows) {
    const err = fromRpcErrorObject(wire, 'm');
    t.equal(err.code, code, JSON.stringify(wire));
    t.equal(err.rpcCode, rpcCode);
  }
  t.end();
});
