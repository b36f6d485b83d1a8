/** The roots a proxy plans from by its own clock (proxy/root-expiry.ts). */
import t from 'tap';
import type { Root } from '../../common/types.js';
import { nextChange, rootsAt } from '../../proxy/root-expiry.js';

const root = (name: string, meta: Partial<Root['_meta']> = {}): Root => ({
  uri: `file:///r/${name}`,
  _meta: { 'mcp-roots/readOnly': false, ...meta },
});
const at = (ms: number) => new Date(ms).toISOString();
const NOW = Date.parse('2026-12-01T12:00:00Z');

void t.test('expired roots are left out, ended writing is read-only', (t) => {
  const roots = [
    root('forever'),
    root('gone', { 'mcp-roots/expiresAt': at(NOW) }),
    root('later', { 'mcp-roots/expiresAt': at(NOW + 1) }),
    root('unreadable', { 'mcp-roots/expiresAt': 'tomorrow' }),
    root('written', { 'mcp-roots/writableUntil': at(NOW - 5) }),
    root('writing', { 'mcp-roots/writableUntil': at(NOW + 5) }),
  ];
  const now = rootsAt(roots, NOW);
  t.same(
    now.map((r) => r.uri.slice('file:///r/'.length)),
    ['forever', 'later', 'written', 'writing'],
    'an expiry at this moment or one that cannot be read has passed',
  );
  t.same(now[2]!._meta, { 'mcp-roots/readOnly': true }, 'its writing over, read-only');
  t.equal(now[3], roots[5], 'still writable: the same root');
  t.equal(roots[4]!._meta['mcp-roots/readOnly'], false, 'the daemon’s list is left as it was');
  t.end();
});

void t.test('the next change: the earliest expiry or end of writing, past ones too', (t) => {
  t.equal(nextChange([root('a')]), undefined, 'nothing ends');
  t.equal(
    nextChange([
      root('a', { 'mcp-roots/expiresAt': at(NOW + 20) }),
      root('b', { 'mcp-roots/writableUntil': at(NOW + 10), 'mcp-roots/expiresAt': at(NOW + 30) }),
    ]),
    NOW + 10,
  );
  t.equal(
    nextChange([root('a', { 'mcp-roots/readOnly': true, 'mcp-roots/writableUntil': at(NOW) })]),
    undefined,
    'a read-only root has no writing to end',
  );
  t.equal(
    nextChange([root('a', { 'mcp-roots/expiresAt': at(NOW - 1000) })]),
    NOW - 1000,
    'passed while the plan was made: planned again at once',
  );
  t.end();
});
