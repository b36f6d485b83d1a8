import t from 'tap';
import { fixtureCase } from '../../helpers/era-cases.js';

void t.test('the v1 client through the proxy to a v2 SDK server asking for roots', (t) =>
  fixtureCase(t, 'v1'),
);
