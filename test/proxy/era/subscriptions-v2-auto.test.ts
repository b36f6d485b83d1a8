import t from 'tap';
import { subscriptionsCase } from '../../helpers/restart-cases.js';

void t.test('a 2026-07-28 host’s subscription stream follows the restarted server', (t) =>
  subscriptionsCase(t, 'v2-auto'),
);
