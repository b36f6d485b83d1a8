/**
 * Whether a glob has a slash inside a `{…}`, `(…)` or `[…]` group, nesting counted: such a glob's
 * segments are not its `/`-separated parts (`{x,[w]/a}/*.yaml` matches `w/a/p.yaml`), so neither a
 * segment-by-segment match nor a depth read from the slashes is right for it. An escaped or
 * unbalanced bracket counts as a group too: the answer errs toward "yes", which callers treat as
 * "could match anywhere" (fail closed).
 */
export function groupHoldsSlash(glob: string): boolean {
  let depth = 0;
  for (const c of glob) {
    if (c === '{' || c === '(' || c === '[') depth++;
    else if ((c === '}' || c === ')' || c === ']') && depth > 0) depth--;
    else if (c === '/' && depth > 0) return true;
  }
  return false;
}
