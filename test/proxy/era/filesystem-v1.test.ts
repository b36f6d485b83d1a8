import t from 'tap';
import { filesystemCase } from '../../helpers/era-cases.js';

void t.test('the v1 client through the proxy to server-filesystem 2.0.1', (t) =>
  filesystemCase(t, 'v1'),
);
