/** Comparing paths by whole segments: the only way this project compares paths. */
import { sep } from 'node:path';

const SLASH = 0x2f;

/** True when `child` is `parent` or lies inside it, compared by whole path segments. */
export function isInsideOrEqual(child: string, parent: string): boolean {
  if (child.length === parent.length) return child === parent;
  if (child.length < parent.length || !child.startsWith(parent)) return false;
  // The next character must start a new segment (or the parent is `/` itself).
  return parent.endsWith(sep) || child.charCodeAt(parent.length) === SLASH;
}

/** True when `child` lies strictly inside `parent`. */
export function isStrictlyInside(child: string, parent: string): boolean {
  return child !== parent && isInsideOrEqual(child, parent);
}
