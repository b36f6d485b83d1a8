/** The one test for "a plain JSON object" (not null, not an array) used across the project. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
