/**
 * Whether a parsed line of the decision log has the shape its kind says. `log` reads a file a
 * daemon named (with `--socket`, any process that answers there), so a line is not trusted to be
 * what `common/decision.ts` says: a field of the wrong type would stop the table part-way, and a
 * long text in a padded column (SERVER, DECISION) would pad every row to its width. A line of
 * the wrong shape is counted as "not an entry", like any other line that is not one.
 */
import { DECISION_KINDS, type Decision } from '../common/decision.js';
import { isObject } from '../common/is-object.js';
import { ASK_ANSWERS, isValidServerName } from '../protocol/validate-params.js';

type Fields = Record<string, unknown>;

const isString = (v: unknown): v is string => typeof v === 'string';
const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
const isStrings = (v: unknown): boolean => Array.isArray(v) && v.every(isString);
const optional =
  (check: (v: unknown) => boolean) =>
  (v: unknown): boolean =>
    v === undefined || check(v);
const isAccess = (v: unknown): boolean => v === 'read' || v === 'write';
/** An RFC 3339 instant as the daemon writes them; longer text is not one. */
const isTime = (v: unknown): boolean =>
  isString(v) && v.length <= 40 && !Number.isNaN(Date.parse(v));
const isGranted = (v: unknown): boolean =>
  isObject(v) && isString(v.path) && isBoolean(v.readOnly) && isTime(v.expiresAt);

/** The fields each kind must have, beyond `time` and `kind`. */
const SHAPES: Record<Decision['kind'], Record<string, (v: unknown) => boolean>> = {
  check: {
    server: isValidServerName,
    path: isString,
    access: isAccess,
    allowed: isBoolean,
    reason: isString,
    tool: optional(isString),
    client: optional(isString),
  },
  roots: {
    server: isValidServerName,
    added: isStrings,
    removed: isStrings,
    changed: optional(isStrings),
  },
  'grant-added': {
    server: isValidServerName,
    path: isString,
    readOnly: optional(isBoolean),
    expiresAt: optional(isTime),
  },
  'grant-revoked': { server: isValidServerName, path: isString },
  'grant-expired': { server: isValidServerName, path: isString },
  'grant-refused': { server: isValidServerName, path: isString, reason: isString },
  ask: {
    server: isValidServerName,
    path: isString,
    access: isAccess,
    answer: (v) => (ASK_ANSWERS as readonly unknown[]).includes(v),
    tool: optional(isString),
    client: optional(isString),
    granted: optional(isGranted),
  },
  'policy-loaded': { reason: isString, files: isStrings, errors: optional(isStrings) },
  'policy-rejected': { reason: isString, files: isStrings, errors: optional(isStrings) },
  lockdown: { on: isBoolean },
};

/** `value` as an entry, or undefined when it is not one of a kind this rootsctl knows. */
export function asDecision(value: unknown): Decision | undefined {
  if (!isObject(value) || !isTime(value.time) || !isString(value.kind)) return undefined;
  if (!(DECISION_KINDS as readonly string[]).includes(value.kind)) return undefined;
  const fields: Fields = value;
  const shape = SHAPES[value.kind as Decision['kind']];
  for (const [name, check] of Object.entries(shape)) if (!check(fields[name])) return undefined;
  return value as unknown as Decision;
}
