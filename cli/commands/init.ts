/** `rootsctl init`: write a starter policy. */
import { EXIT, type ExitCode, type Io } from '../io.js';

/** Not yet: issue 7. */
export function initPolicy(io: Io, _opts: { force: boolean; config?: string }): Promise<ExitCode> {
  io.err('rootsctl init: not yet\n');
  return Promise.resolve(EXIT.fail);
}
