/** `--for 30m` and `--until 2026-12-31T18:00:00Z`. */
import { RootsError } from '../common/errors.js';
import { parseRfc3339, RFC3339_WANTED } from '../common/rfc3339.js';

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** Seconds in a duration such as `90s`, `30m`, `2h`, `1d`, `1h30m`. */
export function parseDuration(text: string): number {
  const re = /(\d+)([smhd])/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    matched = re.lastIndex;
  }
  if (text === '' || matched !== text.length || total <= 0) {
    throw new RootsError(
      'USAGE',
      `--for "${text}" is not a duration; write e.g. 90s, 30m, 2h, 1d or 1h30m`,
    );
  }
  return total;
}

/** An RFC 3339 instant with a zone, as an ISO string; a date that does not exist is refused. */
export function parseUntil(text: string): string {
  const ms = parseRfc3339(text);
  if (ms === undefined) {
    throw new RootsError('USAGE', `--until "${text}" is not ${RFC3339_WANTED}`);
  }
  return new Date(ms).toISOString();
}
