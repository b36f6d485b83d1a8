import t from 'tap';
import { fixtureCase } from '../../helpers/era-cases.js';

void t.test(
  'the v2 client in auto mode through the proxy to a v2 SDK server asking for roots',
  (t) => fixtureCase(t, 'v2-auto'),
);
