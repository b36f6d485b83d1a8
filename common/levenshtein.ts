/** Edit distance, for every "did you mean" the project prints. */

/** The edit distance between two strings (insertions, deletions, substitutions). */
export function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        prev[j]! + 1,
        row[j - 1]! + 1,
        prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    prev = row;
  }
  return prev[b.length]!;
}

/** The name of `known` closest to `name` within `max` edits (the first on a tie), or undefined. */
export function closest(name: string, known: readonly string[], max = 2): string | undefined {
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
