/**
 * Telling a real edit of the policy or grants files from noise: the watcher reports that
 * something in their directories moved; this compares the files (their bytes, and where each
 * opened) with what the state's last load of them read, and reloads only when they differ.
 */
import {
  mapBounded,
  MAX_POLICY_FILES,
  MAX_POLICY_TOTAL_BYTES,
  POLICY_READS_IN_FLIGHT,
  prepareParse,
  readPolicyFile,
  type PolicyFileRead,
} from '../policies/index.js';
import type { PolicyState } from './state.js';
import { fingerprint, globMoved, relocated, vanished, type Fingerprint } from './watch-policy.js';

/** A delete followed by a write (some editors' save) gets this long to finish before it counts. */
const VANISH_GRACE_MS = 100;

/** Which of the two groups of files an event may have changed. */
export interface EditedGroups {
  policy: boolean;
  grants: boolean;
}

export interface PolicyEditsOptions {
  state: PolicyState;
  /** The grants file; without it every edit reloads both groups. */
  grantsFile?: string;
  settleMs: number;
  /** Whether the watcher has closed meanwhile. */
  closed: () => boolean;
  /** Look again after `delayMs` (a file that vanished may be an editor's save in progress). */
  again: (what: EditedGroups, delayMs: number) => void;
}

export class PolicyEdits {
  /** The files as the watcher last read them: what a vanished file is told by. */
  private lastPrint: Fingerprint | undefined;
  private graceUsed = false;

  /** Whether `prepare` is reading, and whether it was asked again meanwhile. */
  private preparing = false;
  private prepareAgain = false;

  constructor(private readonly opts: PolicyEditsOptions) {}

  /**
   * Read and parse the policy's files now, while the settle window runs, so that the reload at
   * its end finds them parsed (policies/load.ts `prepareParse`; a parse is used only if the
   * file's bytes are still the same then). Asked again while reading: once more after it, for
   * an editor's later steps.
   */
  prepare(): void {
    if (this.preparing) {
      this.prepareAgain = true;
      return;
    }
    this.preparing = true;
    // The grants file is the daemon's own, written on every grant: not parsed ahead.
    const files = this.opts.state.resolved.watchPlan.policyFiles.filter(
      (f) => f !== this.opts.grantsFile,
    );
    // A few at a time, and no more than one policy may hold (policies/policy-caps.ts): the files
    // may have grown since they were loaded, up to 1 MiB each. Past the caps the reload refuses
    // the policy anyway; nothing is parsed ahead for it.
    let bytesLeft = MAX_POLICY_TOTAL_BYTES;
    void mapBounded(files.slice(0, MAX_POLICY_FILES), POLICY_READS_IN_FLIGHT, async (f) => {
      if (bytesLeft < 0 || this.opts.closed()) return;
      // Missing or unreadable: the reload will say so.
      const bytes = await readPolicyFile(f).catch(() => undefined);
      if (bytes === undefined) return;
      bytesLeft -= bytes.length;
      if (bytesLeft >= 0 && !this.opts.closed()) prepareParse(f, bytes);
    }).then(() => {
      this.preparing = false;
      if (this.prepareAgain && !this.opts.closed()) {
        this.prepareAgain = false;
        this.prepare();
      }
    });
  }

  /**
   * Reload the policy and/or grants files when a load now would not see what the last load of
   * that group saw (state.ts `lastLook`: the files it read, valid or not, and what its include
   * globs matched), whoever asked for that load: the watcher, a `rootsctl reload`, a grant.
   * Compared with the last load, and not with the policy in force or the watcher's own last
   * look, an edit made and undone around another load is still seen, a fix of a refused policy
   * is loaded (a missing include created, say), and a refused policy is not loaded again and
   * again while its files stay as they are.
   */
  async reloadIfEdited(policy: boolean, grants: boolean): Promise<boolean> {
    const { state, grantsFile } = this.opts;
    await state.readsSettled();
    if (this.opts.closed()) return false;
    // The bytes read here are the ones compared: the reload below loads them, not a second read,
    // unless another load (`rootsctl reload`, a grant) runs in between (state.ts `reload`).
    const loadsBefore = state.loads;
    const reads = new Map<string, PolicyFileRead>();
    const prints = {
      policy: await fingerprint(state.lastLook('policy').files.keys(), reads),
      grants: await fingerprint(state.lastLook('grants').files.keys(), reads),
    };
    // A load that began reading meanwhile is the last one, and the one to compare with: it may
    // have read a state of the files these reads did not see.
    await state.readsSettled();
    const looks = { policy: state.lastLook('policy'), grants: state.lastLook('grants') };
    if (this.opts.closed()) return false;
    const all: Fingerprint = new Map([...prints.policy, ...prints.grants]);
    if (!this.graceUsed && vanished(this.lastPrint, all)) {
      // An editor's delete-then-write, or a deliberate delete: give it a moment to tell.
      this.graceUsed = true;
      this.opts.again({ policy, grants }, Math.max(VANISH_GRACE_MS, this.opts.settleMs));
      return false;
    }
    this.graceUsed = false;
    this.lastPrint = all;
    const changed = {
      policy:
        policy &&
        (!sameFiles(prints.policy, looks.policy.files) ||
          (await someAsync(looks.policy.globs, globMoved)) ||
          (await someAsync(looks.policy.located, relocated))),
      grants:
        grants &&
        (!sameFiles(prints.grants, looks.grants.files) ||
          (await someAsync(looks.grants.located, relocated))),
    };
    if (!changed.policy && !changed.grants) return false;
    if (this.opts.closed()) return false;
    const both = grantsFile === undefined || (changed.policy && changed.grants);
    // The grants file is read again: a grant queued ahead of this reload may write it meanwhile,
    // and loading the bytes compared here would take that grant back until the next event.
    if (grantsFile !== undefined) reads.delete(grantsFile);
    await state.reload(
      { ...(both ? { policy: true, grants: true } : changed), fromSnapshot: true },
      'file changed',
      true,
      { files: reads, loadsBefore },
    );
    return true;
  }
}

/** Whether `test` holds for some item, asked one at a time (each may walk a directory). */
async function someAsync<T>(items: readonly T[], test: (item: T) => Promise<boolean>) {
  for (const item of items) if (await test(item)) return true;
  return false;
}

/** Whether the files on disk (`now`, the same names) are as a load read them (`loaded`). */
function sameFiles(now: Fingerprint, loaded: ReadonlyMap<string, string>): boolean {
  for (const [f, h] of loaded) if (h !== now.get(f)) return false;
  return true;
}
