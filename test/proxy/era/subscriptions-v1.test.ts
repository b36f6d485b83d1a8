import t from 'tap';
import { subscriptionsCase } from '../../helpers/restart-cases.js';

void t.test('a 2025-era host’s resource subscriptions follow the restarted server', (t) =>
  subscriptionsCase(t, 'v1'),
);
