/**
 * Parse one policy file: YAML with positions, then validation against roots.schema.json, then
 * the engine's model. Each step's errors are worded in their own module (yaml-errors.ts,
 * schema-errors.ts); positions come from yaml-locate.ts.
 */
import type { ValidateFunction } from 'ajv';
import { LineCounter, parseDocument } from 'yaml';
import { buildPolicyFile, type RawPolicy } from './build-model.js';
import { dedupe, errorAt, oneLine, sortErrors } from './error-list.js';
import { fileHash } from './hash.js';
import { isGlob } from '../common/glob-dialect.js';
import type { PolicyError } from '../common/types.js';
import type { ParsedPolicyFile, ParseResult, Pos } from './model.js';
import { validate as compiledValidator } from './schema-validator.js';
import { schemaErrors } from './schema-errors.js';
import { salvage } from './schema-salvage.js';
import {
  badKeys,
  collectAliases,
  firstInvalidUtf8,
  invalidUtf8Error,
  starKeyErrors,
  yamlError,
  yamlWarning,
} from './yaml-errors.js';
import { indentErrors } from './yaml-indent.js';
import { dotted, Locator } from './yaml-locate.js';

export { MAX_ERRORS } from './error-list.js';

/**
 * The schema's validator, compiled from roots.schema.json at build time (scripts/build-validator.mjs):
 * compiling it here at start-up would cost every process ajv and tens of megabytes.
 */
const validateSchema = compiledValidator as unknown as ValidateFunction<RawPolicy>;

/** The largest policy file accepted, in bytes. */
export const MAX_POLICY_BYTES = 1024 * 1024;

/** How many alias expansions a file may make before it is taken for a "billion laughs" file. */
export const MAX_ALIAS_COUNT = 100;

/**
 * Parse and validate the text of one policy file. Pure: no filesystem, environment or clock.
 * Never throws; every problem is an entry in `errors`, with `file` as given.
 */
export function parsePolicyText(text: string | Buffer, file: string): ParseResult {
  try {
    return parse(text, file);
  } catch (err) {
    // A safety net: the steps below are meant not to throw, but a policy must never crash a caller.
    const reason = err instanceof RangeError ? 'it is nested too deeply' : oneLine(String(err));
    return { errors: [errorAt(file, 1, 1, `cannot read this policy: ${reason}`)], warnings: [] };
  }
}

function parse(text: string | Buffer, file: string): ParseResult {
  const size = typeof text === 'string' ? Buffer.byteLength(text, 'utf8') : text.length;
  if (size > MAX_POLICY_BYTES) {
    return { errors: [errorAt(file, 1, 1, tooBigMessage(size))], warnings: [] };
  }
  let source: string;
  if (typeof text === 'string') {
    source = text;
  } else {
    const bad = firstInvalidUtf8(text);
    if (bad >= 0) return { errors: [invalidUtf8Error(text, bad, file)], warnings: [] };
    source = new TextDecoder('utf-8').decode(text);
  }

  const lineCounter = new LineCounter();
  const doc = parseDocument(source, {
    lineCounter,
    prettyErrors: false,
    // Checked below in linear time: yaml's own check is quadratic in the size of a mapping.
    uniqueKeys: false,
    // Never print to the process's stderr: every problem becomes an error or a warning here.
    logLevel: 'error',
    // YAML 1.2 core whatever a %YAML directive says: yes/no stay strings and dates stay text;
    // YAML 1.1 tags such as !!timestamp would turn strings into Dates and Buffers.
    schema: 'core',
    resolveKnownTags: false,
  });
  const at = (offset: number): Pos => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, column: col };
  };
  const warnings = doc.warnings.map((w) => ({ ...at(w.pos[0]), message: yamlWarning(w) }));
  if (doc.directives?.yaml.version === '1.1') {
    const message =
      'read as YAML 1.2 whatever %YAML says: yes, no, on and off are strings (write true or false)';
    warnings.unshift({ file, line: 1, column: 1, message });
  }

  if (doc.errors.length > 0) {
    const stars = starKeyErrors(source, doc.warnings, at);
    if (stars.length > 0) return { errors: stars, warnings: [] };
    // One slip of indentation, one error: YAML's own for the same line say less.
    const indent = indentErrors(
      source,
      doc.errors.map((e) => e.pos),
      at,
    );
    const errors = doc.errors
      .filter((e) => !indent.explains(e.pos))
      .map((e) => yamlError(e, doc, source, at));
    return { errors: sortErrors(dedupe([...indent.errors, ...errors])), warnings };
  }

  const keyErrors = badKeys(doc, doc.contents, [], []).map(({ node, segs, duplicate }) => ({
    ...at(node.range?.[0] ?? 0),
    message: duplicate
      ? `${dotted(segs)}: duplicate key; a key may appear only once in a mapping, so remove or merge one`
      : `${segs.length === 0 ? 'a key' : `${dotted(segs)}: a key`} must be a name, ` +
        'not a mapping or list; is a ":" or a quote misplaced?',
  }));
  if (keyErrors.length > 0) return { errors: sortErrors(dedupe(keyErrors)), warnings };

  const aliases = collectAliases(doc.contents, []);
  const unresolved = aliases.filter((a) => a.resolve(doc) === undefined);
  if (unresolved.length > 0) {
    const errors = unresolved.map((a) => ({
      ...at(a.range?.[0] ?? 0),
      message:
        `invalid YAML: *${a.source} starts with *, so YAML reads it as an alias of an anchor ` +
        `that does not exist; if it is a path or glob, put it in quotes: ${JSON.stringify(`*${a.source}`)}`,
    }));
    return { errors: sortErrors(dedupe(errors)), warnings };
  }

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    if (err instanceof ReferenceError) {
      const alias = aliases[0];
      const pos = alias?.range ? at(alias.range[0]) : { file, line: 1, column: 1 };
      const message =
        `aliases expand to too much data (over ${MAX_ALIAS_COUNT} expansions, as in a ` +
        '"billion laughs" file); write the values out instead of nesting aliases';
      return { errors: [{ ...pos, message }], warnings };
    }
    throw err;
  }

  const locate = new Locator(doc, at, file);
  const validate = validateSchema;
  if (!validate(data)) {
    const errors = schemaErrors(validate.errors ?? [], data, locate);
    const rest = salvage(data, validate);
    if (rest === undefined) return { errors: sortErrors(dedupe(errors)), warnings };
    const salvaged = buildPolicyFile(rest as RawPolicy, locate, file, '');
    return {
      salvaged,
      errors: sortErrors(dedupe(errors)),
      warnings: [...warnings, ...oneNameForMany(salvaged)],
    };
  }

  const policy = buildPolicyFile(data, locate, file, '');
  lazyHash(policy, text);
  return { policy, errors: [], warnings: [...warnings, ...oneNameForMany(policy)] };
}

/**
 * `policy.sha256`, computed when first read. The daemon reads it (it tells its own loads from
 * edits); `rootsctl validate` never does, and hashing would load node:crypto into every start.
 */
function lazyHash(policy: ParsedPolicyFile, text: string | Buffer): void {
  Object.defineProperty(policy, 'sha256', {
    enumerable: true,
    configurable: true,
    get() {
      const value = fileHash(text);
      Object.defineProperty(policy, 'sha256', { value, enumerable: true, writable: true });
      return value;
    },
  });
}

/** Why a file of `size` bytes over the limit is refused, and what to do. */
export function tooBigMessage(size: number): string {
  const mib = (size / MAX_POLICY_BYTES).toFixed(1);
  const shown = mib === '1.0' ? `${size} bytes` : `${mib} MiB`;
  return `file is ${shown}; a policy file may be at most 1 MiB (split it with include)`;
}

/**
 * A glob entry with a `name` that has no `{base}`: every match would be listed under that one
 * name, and a host shows them as one. Valid, but most likely not meant.
 */
function oneNameForMany(policy: ParsedPolicyFile): PolicyError[] {
  return policy.servers.flatMap((block) =>
    block.roots
      .filter((r) => r.name !== undefined && !r.name.includes('{base}') && isGlob(r.path))
      .map((r) => ({
        ...r.pos,
        message: `${r.path}: every match of this glob is named ${JSON.stringify(r.name)}; put {base} in the name (${JSON.stringify(`${r.name} {base}`)}) to tell them apart`,
      })),
  );
}
