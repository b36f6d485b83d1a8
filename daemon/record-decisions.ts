/** What the policy state decides on its own (lists, loads, lockdown) goes to the decision log. */
import type { DecisionSink } from './decision-log.js';
import type { PolicyState } from './state.js';

export function recordStateDecisions(state: PolicyState, decisions: DecisionSink): void {
  state.on('changed', (_revision, changes) => {
    for (const change of changes) {
      decisions.record({
        kind: 'roots',
        server: change.server,
        added: change.added,
        removed: change.removed,
        ...(change.changed.length > 0 ? { changed: change.changed } : {}),
      });
    }
  });
  state.on('loaded', (reason, files, errors) => {
    decisions.record(
      errors.length === 0
        ? { kind: 'policy-loaded', reason, files }
        : {
            kind: 'policy-rejected',
            reason,
            files,
            errors: errors.map((e) => `${e.file}:${e.line}:${e.column}: ${e.message}`),
          },
    );
  });
  state.on('lockdown', (on) => decisions.record({ kind: 'lockdown', on }));
}
