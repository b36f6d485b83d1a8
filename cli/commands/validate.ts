/** `rootsctl validate [FILE]`: the policy's errors and warnings, without a daemon. */
import { onPolicy } from '../on-policy.js';
import { fileURLToPath } from 'node:url';
import { configFile, homeDir, tildify } from '../../common/locations.js';
import type { PolicyError } from '../../common/types.js';
import { EXIT, type ExitCode, type Io } from '../io.js';
import { evaluateOffline } from '../offline.js';
import { problemLines, sortProblems } from '../format.js';
import { ctl } from '../hint.js';
import type { Options } from '../options.js';
import { inLine } from '../terminal-text.js';

export interface ValidateResult {
  ok: boolean;
  files: string[];
  errors: PolicyError[];
  warnings: PolicyError[];
}

/**
 * `rootsctl validate [FILE]`: a policy file and everything it includes; exit 1 on errors. The
 * grants file beside the main policy is checked with it, but only policy files are counted: the
 * grants file is the daemon's, not part of the policy a person wrote. A FILE other than the main
 * policy file is checked alone.
 */
export async function validate(io: Io, [given]: string[], opts: Options): Promise<ExitCode> {
  const target = given ?? opts.config;
  const main = configFile(io.env, io.cwd);
  const { evaluation, file } = await evaluateOffline(io, {
    config: target,
    stateDir: opts['state-dir'],
    withGrants: target === undefined || configFile(io.env, io.cwd, target) === main,
  });
  const json = opts.json ?? false;
  const warnings = sortProblems([...evaluation.warnings, ...writableProtected(evaluation)]);
  const result: ValidateResult = {
    ok: evaluation.errors.length === 0,
    // The policy's files: the main file and its includes.
    files: evaluation.sources.files.map((f) => f.file),
    errors: sortProblems(evaluation.errors),
    warnings,
  };
  const home = homeDir(io.env);
  if (json) {
    io.out(`${JSON.stringify(result, null, 2)}\n`);
  } else if (evaluation.sources.missingMain) {
    io.err(
      `${inLine(tildify(file, home))} does not exist: the daemon would serve no roots. Create it with \`${ctl(io, onPolicy(io, 'init', file))}\`.\n`,
    );
  } else {
    io.out(problemLines('error', result.errors, home));
    io.out(problemLines('warning', result.warnings, home));
    const n = result.files.length;
    const e = result.errors.length;
    // Only the main policy file is one a running daemon serves.
    const served = file === main;
    io.out(
      result.ok
        ? `${inLine(tildify(file, home))}: valid (${n} file${n === 1 ? '' : 's'}, ${warnings.length} warning${warnings.length === 1 ? '' : 's'})\n`
        : `${inLine(tildify(file, home))}: ${e} error${e === 1 ? '' : 's'}${served ? '; a running mcp-rootsd keeps serving the last valid policy until it is fixed' : ''}\n`,
    );
  }
  if (evaluation.sources.missingMain && !json) return EXIT.fail;
  return result.ok && !evaluation.sources.missingMain ? EXIT.ok : EXIT.fail;
}

/** A warning for each writable root that contains a policy file (docs/policy.md rule 6). */
function writableProtected(
  evaluation: Awaited<ReturnType<typeof evaluateOffline>>['evaluation'],
): PolicyError[] {
  const out: PolicyError[] = [];
  const resolved = evaluation.resolved;
  const files = [...evaluation.sources.files, ...(evaluation.grants?.files ?? [])].map(
    (f) => f.file,
  );
  const names = new Set<string>();
  for (const f of evaluation.sources.files) for (const b of f.servers) names.add(b.pattern);
  const seen = new Set<string>();
  for (const name of names) {
    const explained = resolved.explain(name);
    for (const root of explained.roots) {
      if (root._meta['mcp-roots/readOnly']) continue;
      const dir = fileURLToPath(root.uri);
      for (const file of files) {
        if (!(file === dir || file.startsWith(dir + '/'))) continue;
        const key = `${root.uri}\0${file}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const rule = explained.rules.find((r) => r.kind === 'root' && r.yielded.includes(root.uri));
        out.push({
          file: rule?.file ?? file,
          line: rule?.line ?? 1,
          column: rule?.column ?? 1,
          message: `${dir} is writable and contains the policy file ${file}; writes to it are refused (protected), but consider a narrower root`,
        });
      }
    }
  }
  return out;
}
