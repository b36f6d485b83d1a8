/** Server-name patterns (docs/policy.md rule 2): only `*` is special, `\*` is a literal star. */

/** Compile a server pattern to a predicate over names. */
export function compileServerPattern(pattern: string): (name: string) => boolean {
  if (!hasWildcard(pattern)) {
    const literal = unescapeStars(pattern);
    return (name) => name === literal;
  }
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && pattern[i + 1] === '*') {
      source += '\\*';
      i++;
    } else if (ch === '*') {
      source += '[\\s\\S]*';
    } else {
      // Under the `u` flag only syntax characters may be escaped (`\-` is an error).
      source += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    }
  }
  const re = new RegExp(`^${source}$`, 'u');
  return (name) => re.test(name);
}

/** True when the pattern has an unescaped `*`. */
export function hasWildcard(pattern: string): boolean {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '\\' && pattern[i + 1] === '*') i++;
    else if (pattern[i] === '*') return true;
  }
  return false;
}

/** The literal name a pattern without wildcards stands for. */
export function unescapeStars(pattern: string): string {
  return pattern.replace(/\\\*/g, '*');
}
