import t from 'tap';
import { RpcError } from '../../protocol/rpc-errors.js';
import {
  isValidServerName,
  validateNotificationParams,
  validateParams,
} from '../../protocol/validate-params.js';
import type { Method } from '../../protocol/methods.js';

const NAME_RULE = 'must be a non-empty string of at most 256 characters with no control characters';

const accepted: [Method, unknown, unknown][] = [
  ['initialize', { protocolVersion: 'mcp-roots/1' }, { protocolVersion: 'mcp-roots/1' }],
  [
    'initialize',
    { protocolVersion: 'mcp-roots/1', clientInfo: { name: 'rootsctl', version: '0.1.0', x: 1 } },
    { protocolVersion: 'mcp-roots/1', clientInfo: { name: 'rootsctl', version: '0.1.0' } },
  ],
  ['roots/list', { server: 'filesystem', extra: true }, { server: 'filesystem' }],
  ['roots/list', { server: 'fs', subscribe: true }, { server: 'fs', subscribe: true }],
  ['roots/list', { server: 'x'.repeat(256) }, { server: 'x'.repeat(256) }],
  ['roots/list', { server: '😀'.repeat(256) }, { server: '😀'.repeat(256) }],
  ['roots/list', { server: 'ünï cødé' }, { server: 'ünï cødé' }],
  ['roots/subscribe', { server: 'fs' }, { server: 'fs' }],
  ['roots/unsubscribe', { server: 'fs' }, { server: 'fs' }],
  ['roots/check', { server: 'fs', path: '/a' }, { server: 'fs', path: '/a' }],
  [
    'roots/check',
    { server: 'fs', path: '/a', access: 'write' },
    { server: 'fs', path: '/a', access: 'write' },
  ],
  ['policy/explain', { server: 'fs' }, { server: 'fs' }],
  ['policy/reload', {}, {}],
  ['policy/reload', undefined, {}],
  ['daemon/status', { verbose: true }, {}],
  ['grants/add', { server: 'fs', path: '/p' }, { server: 'fs', path: '/p' }],
  [
    'grants/add',
    { server: 'fs', path: '/p', seconds: 60, readOnly: true, name: 'docs' },
    { server: 'fs', path: '/p', seconds: 60, readOnly: true, name: 'docs' },
  ],
  [
    'grants/add',
    { server: 'fs', path: '/p', expires: '2026-12-31T18:00:00+01:00' },
    { server: 'fs', path: '/p', expires: '2026-12-31T18:00:00+01:00' },
  ],
  ['grants/list', {}, {}],
  ['grants/revoke', { server: 'fs' }, { server: 'fs' }],
  ['grants/revoke', { server: 'fs', path: '/p' }, { server: 'fs', path: '/p' }],
  ['policy/lockdown', { on: false }, { on: false }],
  [
    'log/ask',
    { server: 'fs', path: '/p', access: 'read', answer: 'decline', tool: 't', extra: 1 },
    { server: 'fs', path: '/p', access: 'read', answer: 'decline', tool: 't' },
  ],
  [
    'log/ask',
    {
      server: 'fs',
      path: '/p/f',
      access: 'write',
      answer: 'accept',
      granted: { path: '/p', readOnly: false, expiresAt: '2026-12-01T10:00:00Z' },
    },
    {
      server: 'fs',
      path: '/p/f',
      access: 'write',
      answer: 'accept',
      granted: { path: '/p', readOnly: false, expiresAt: '2026-12-01T10:00:00Z' },
    },
  ],
];

for (const [method, params, expected] of accepted) {
  void t.test(`${method} accepts ${JSON.stringify(params)?.slice(0, 60)}`, (t) => {
    t.same(validateParams(method, params), expected);
    t.end();
  });
}

const rejected: [Method, unknown, string, string][] = [
  ['roots/list', {}, `roots/list: params.server ${NAME_RULE}`, 'SERVER_NAME_INVALID'],
  ['roots/list', { server: '' }, `roots/list: params.server ${NAME_RULE}`, 'SERVER_NAME_INVALID'],
  [
    'roots/list',
    { server: 'x'.repeat(257) },
    `roots/list: params.server ${NAME_RULE}`,
    'SERVER_NAME_INVALID',
  ],
  [
    'roots/list',
    { server: 'a\nb' },
    `roots/list: params.server ${NAME_RULE}`,
    'SERVER_NAME_INVALID',
  ],
  [
    'roots/list',
    { server: 'a\u007fb' },
    `roots/list: params.server ${NAME_RULE}`,
    'SERVER_NAME_INVALID',
  ],
  [
    'roots/list',
    { server: 'a\u0085b' },
    `roots/list: params.server ${NAME_RULE}`,
    'SERVER_NAME_INVALID',
  ],
  ['roots/list', { server: 7 }, `roots/list: params.server ${NAME_RULE}`, 'SERVER_NAME_INVALID'],
  [
    'roots/list',
    { server: 'fs', subscribe: 'yes' },
    'roots/list: params.subscribe must be true or false',
    'USAGE',
  ],
  ['roots/list', ['fs'], 'roots/list: params must be an object', 'USAGE'],
  ['roots/list', 'fs', 'roots/list: params must be an object', 'USAGE'],
  [
    'roots/check',
    { server: 'fs' },
    'roots/check: params.path must be a non-empty string with no NUL character',
    'PATH_INVALID',
  ],
  [
    'roots/check',
    { server: 'fs', path: '/a\0b' },
    'roots/check: params.path must be a non-empty string with no NUL character',
    'PATH_INVALID',
  ],
  [
    'roots/check',
    { server: 'fs', path: '/a', access: 'exec' },
    'roots/check: params.access must be "read" or "write"',
    'USAGE',
  ],
  [
    'grants/add',
    { server: 'fs', path: '/p', seconds: 0 },
    'grants/add: params.seconds must be a positive integer',
    'USAGE',
  ],
  [
    'grants/add',
    { server: 'fs', path: '/p', seconds: 1.5 },
    'grants/add: params.seconds must be a positive integer',
    'USAGE',
  ],
  [
    'grants/add',
    { server: 'fs', path: '/p', expires: 'tomorrow' },
    'grants/add: params.expires must be an RFC 3339 date-time with a zone, e.g. 2026-12-31T18:00:00Z',
    'USAGE',
  ],
  [
    'grants/add',
    { server: 'fs', path: '/p', expires: '2026-12-31T18:00:00' },
    'grants/add: params.expires must be an RFC 3339 date-time with a zone, e.g. 2026-12-31T18:00:00Z',
    'USAGE',
  ],
  [
    'grants/add',
    { server: 'fs', path: '/p', seconds: 5, expires: '2026-12-31T18:00:00Z' },
    'grants/add: params.seconds must be absent when params.expires is given (one or the other)',
    'USAGE',
  ],
  [
    'grants/add',
    { server: 'fs', path: '/p', readOnly: 1 },
    'grants/add: params.readOnly must be true or false',
    'USAGE',
  ],
  [
    'grants/add',
    { server: 'fs', path: '/p', name: '' },
    `grants/add: params.name ${NAME_RULE}`,
    'USAGE',
  ],
  [
    'grants/revoke',
    { server: 'fs', path: '' },
    'grants/revoke: params.path must be a non-empty string with no NUL character',
    'PATH_INVALID',
  ],
  ['policy/lockdown', {}, 'policy/lockdown: params.on must be true or false', 'USAGE'],
  [
    'log/ask',
    { server: 'fs', path: '/p', access: 'read', answer: 'yes' },
    'log/ask: params.answer must be "accept", "decline", "cancel" or "timeout"',
    'USAGE',
  ],
  [
    'log/ask',
    { server: 'fs', path: '/p', answer: 'accept' },
    'log/ask: params.access must be "read" or "write"',
    'USAGE',
  ],
  [
    'log/ask',
    { server: 'fs', path: '/p', access: 'read', answer: 'accept', granted: { path: '/p' } },
    'log/ask: params.granted.expiresAt must be an RFC 3339 date-time with a zone, e.g. 2026-12-31T18:00:00Z',
    'USAGE',
  ],
  [
    'initialize',
    {},
    'initialize: params.protocolVersion must be a non-empty string such as "mcp-roots/1"',
    'USAGE',
  ],
  [
    'initialize',
    { protocolVersion: 'mcp-roots/1', clientInfo: { name: 'x' } },
    `initialize: params.version ${NAME_RULE}`,
    'USAGE',
  ],
  ['daemon/status', [], 'daemon/status: params must be an object', 'USAGE'],
];

for (const [method, params, message, code] of rejected) {
  void t.test(`${method} rejects ${JSON.stringify(params).slice(0, 60)}`, (t) => {
    let caught: unknown;
    try {
      validateParams(method, params);
    } catch (err) {
      caught = err;
    }
    t.ok(caught instanceof RpcError);
    t.match(caught, { rpcCode: -32602, code });
    t.equal((caught as Error).message, message);
    t.end();
  });
}

void t.test('isValidServerName', (t) => {
  t.ok(isValidServerName('filesystem'));
  t.notOk(isValidServerName('tab\there'));
  t.notOk(isValidServerName(undefined));
  t.end();
});

void t.test('list_changed params are checked', (t) => {
  const params = { server: 'fs', revision: 3, instance: 'abc', roots: [], extra: 1 };
  t.same(validateNotificationParams('notifications/roots/list_changed', params), {
    server: 'fs',
    revision: 3,
    instance: 'abc',
    roots: [],
  });
  t.throws(
    () => validateNotificationParams('notifications/roots/list_changed', { ...params, roots: [1] }),
    /params\.roots\[0\] must be a root/,
  );
  t.end();
});
