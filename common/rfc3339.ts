/**
 * RFC 3339 date-times with a zone: the one grammar every door uses (policy `expires:`, the grants
 * file, `grants/add`'s `expires`, `rootsctl grant --until`). `Date.parse` alone is not enough: it
 * rolls 2026-02-30 over to 2 March, so a date that does not exist must be refused here.
 */

/** The example every message about a bad date-time shows. */
export const RFC3339_EXAMPLE = '2026-12-31T18:00:00Z';

/** What a bad date-time must be, for error messages: "… is not {RFC3339_WANTED}". */
export const RFC3339_WANTED = `an RFC 3339 date-time with a zone, e.g. ${RFC3339_EXAMPLE}`;

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** Milliseconds since the epoch for an RFC 3339 date-time with a zone, or undefined. */
export function parseRfc3339(s: string): number | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const offHours = Number(m[9] ?? 0);
  const offMinutes = Number(m[10] ?? 0);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  // 60 is a leap second (RFC 3339 section 5.7); it reads as the next second.
  if (hour > 23 || minute > 59 || second > 60 || offHours > 23 || offMinutes > 59) return undefined;
  const ms = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  // setUTCFullYear, because Date.UTC maps years 0-99 to 1900-1999.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, ms);
  const sign = m[8] === '-' ? -1 : 1;
  return d.getTime() - sign * (offHours * 60 + offMinutes) * 60_000;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}
