/** Already-serialised JSON that a handler can return (or a caller send) without a second `JSON.stringify`. */

/** JSON text standing for a value of type `T`; it must be `JSON.stringify` output (no raw newline). */
export class RawJson<T = unknown> {
  declare readonly __type?: T;

  constructor(readonly json: string) {}
}

/** Wrap JSON text that stands for a `T`, e.g. a snapshot's ready-to-send list. */
export function rawJson<T>(json: string): RawJson<T> {
  return new RawJson<T>(json);
}

/** The JSON text of a value, reusing it when it is already `RawJson` (`undefined` becomes `null`). */
export function jsonText(value: unknown): string {
  if (value instanceof RawJson) return value.json;
  return JSON.stringify(value === undefined ? null : value);
}
