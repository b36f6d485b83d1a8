import t from 'tap';
import { followsPolicyCase } from '../../helpers/restart-cases.js';

void t.test('a 2026-07-28 host (v2 client, auto) keeps its session through restarts', (t) =>
  followsPolicyCase(t, 'v2-auto'),
);
