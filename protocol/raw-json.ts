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

/**
 * JSON text standing for a value of type `T`, as UTF-8 pieces in order (a big list kept as the
 * bytes of its runs): written out as they are, never decoded or encoded again. The pieces must
 * together be `JSON.stringify` output (no raw newline) and are not written to.
 */
export class RawJsonBytes<T = unknown> {
  declare readonly __type?: T;

  constructor(readonly parts: readonly Buffer[]) {}
}

/** Wrap UTF-8 pieces (strings are encoded) that together are the JSON text of a `T`. */
export function rawJsonBytes<T>(parts: readonly (Buffer | string)[]): RawJsonBytes<T> {
  return new RawJsonBytes<T>(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
}
