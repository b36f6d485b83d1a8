import t from 'tap';
import { filesystemCase } from '../../helpers/era-cases.js';

void t.test('the v2 client in auto mode through the proxy to server-filesystem 2.0.1', (t) =>
  filesystemCase(t, 'v2-auto'),
);
