import t from 'tap';
import { filesystemCase } from '../../helpers/era-cases.js';

void t.test(
  'the v2 client pinned to 2026-07-28 through the proxy to server-filesystem 2.0.1',
  (t) => filesystemCase(t, 'v2-pin'),
);
