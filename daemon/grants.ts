/** Temporary grants and lockdown: the grants file written by the daemon (issue 6). */
import type { Logger } from 'winston';
import type { Methods } from '../protocol/methods.js';
import type { PolicyState } from './state.js';

export interface GrantStoreOptions {
  state: PolicyState;
  file: string;
  dir: string;
  log: Logger;
}

type Handlers = Partial<{ [M in keyof Methods]: (params: Methods[M]['params']) => Promise<Methods[M]['result']> }>;

/** Writes grants.yaml atomically and serially. */
export class GrantStore {
  constructor(private readonly opts: GrantStoreOptions) {}

  handlers(): Handlers {
    return {
      'policy/lockdown': async (params) => {
        await this.opts.state.setLockdown(params.on);
        return { lockdown: this.opts.state.lockdown };
      },
    };
  }
}
