import type { Server } from 'node:net';

/**
 * `server.listen` as a promise: settles once the server listens on `target` (a path, an abstract
 * name, or an inherited descriptor), or rejects with the error that kept it from listening.
 */
export function listenOn(server: Server, target: string | { fd: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const done = () => {
      server.off('error', reject);
      resolve();
    };
    if (typeof target === 'string') server.listen(target, done);
    else server.listen(target, done);
  });
}
