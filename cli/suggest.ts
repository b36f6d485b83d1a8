/** "Did you mean": the known name closest to a typo. */

import { levenshtein } from '../common/levenshtein.js';

/** The name of `known` closest to `name` within `max` edits (the first on a tie), or undefined. */
export function closest(name: string, known: string[], max = 2): string | undefined {
  let best: string | undefined;
  let bestDistance = max + 1;
  for (const k of known) {
    if (k === name) continue;
    const d = levenshtein(name, k);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}
