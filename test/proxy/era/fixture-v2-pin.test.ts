import t from 'tap';
import { fixtureCase } from '../../helpers/era-cases.js';

void t.test(
  'the v2 client pinned to 2026-07-28 through the proxy to a v2 SDK server asking for roots',
  (t) => fixtureCase(t, 'v2-pin'),
);
