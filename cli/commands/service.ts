/** `rootsctl install-service` and `uninstall-service`. */
import { EXIT, type ExitCode, type Io } from '../io.js';

/** Not yet: issue 7. */
export function installService(io: Io, _opts: { dryRun: boolean }): Promise<ExitCode> {
  io.err('rootsctl install-service: not yet\n');
  return Promise.resolve(EXIT.fail);
}

/** Not yet: issue 7. */
export function uninstallService(io: Io, _opts: { dryRun: boolean }): Promise<ExitCode> {
  io.err('rootsctl uninstall-service: not yet\n');
  return Promise.resolve(EXIT.fail);
}
