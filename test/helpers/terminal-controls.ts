/**
 * What a terminal would act on or reorder rather than show, a line's own end aside: C0 but `\n`,
 * DEL, the C1 controls, the line separators and the bidi controls; and what it shows as
 * nothing: the zero-width space and joiners, the byte order mark, the soft hyphen, the word
 * joiner. Written out here, apart from the code's own list (common/acted-on.ts), so that the
 * tests check that list rather than repeat it: no output a test reads may hold one of these raw.
 */
export const ACTED_ON_RAW =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060\u2066-\u2069\ufeff]/;
