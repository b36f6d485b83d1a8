/** Waiting that a host's cancellation ends at once: the call it belongs to is no longer wanted. */

/** Thrown where a cancelled call's check stops: nothing is relayed and nothing is answered. */
export class CallCancelled extends Error {
  constructor() {
    super('the host cancelled the request');
    this.name = 'CallCancelled';
  }
}

/** Throw `CallCancelled` if `signal` was aborted. */
export function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw new CallCancelled();
}

/**
 * `promise`, or a rejection with `CallCancelled` as soon as `signal` aborts (whatever `promise`
 * does later is ignored). Without a signal, `promise` itself.
 */
export function untilCancelled<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(new CallCancelled());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new CallCancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/** `promise`, waited for `ms` at most (its failure ends the wait too; the timer keeps nothing up). */
export function withinLimit(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    promise.then(done, done);
  });
}
