/**
 * The expiry timer (common/expiry-timer.ts): an instant of the clock, waited for in steps, since
 * Node's timers stop while the machine sleeps and the clock does not.
 */
import t from 'tap';
import { ExpiryTimer } from '../../common/expiry-timer.js';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

void t.test('an instant already past fires at once; none clears', (t) => {
  let fired = 0;
  const timer = new ExpiryTimer(() => fired++);
  timer.set(Date.now() - 1, Date.now);
  t.equal(fired, 1, 'in the call');
  timer.set(undefined, Date.now);
  t.equal(fired, 1);
  t.end();
});

void t.test('a clock that jumps ahead (a sleep) is seen within a step', async (t) => {
  let clock = Date.parse('2026-12-01T12:00:00Z');
  let fired = 0;
  const timer = new ExpiryTimer(() => fired++, 20);
  t.teardown(() => timer.clear());
  timer.set(clock + 3_600_000, () => clock);
  await tick(60);
  t.equal(fired, 0, 'an hour away: not yet');
  // Two hours pass while the process's timers stand still.
  clock += 7_200_000;
  await tick(200);
  t.equal(fired, 1, 'fired at the next step');
});

void t.test('set again replaces; clear stops', async (t) => {
  let fired = 0;
  const timer = new ExpiryTimer(() => fired++, 10);
  t.teardown(() => timer.clear());
  timer.set(Date.now() + 30, Date.now);
  timer.set(Date.now() + 3_600_000, Date.now);
  await tick(100);
  t.equal(fired, 0, 'the first instant was replaced');
  timer.set(Date.now() + 30, Date.now);
  timer.clear();
  await tick(100);
  t.equal(fired, 0, 'cleared');
});
