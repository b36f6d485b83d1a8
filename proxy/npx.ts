/**
 * `npx PKG ARGS` inside a sandbox: npx would fetch the package's metadata and write npm's cache,
 * neither of which a read-only sandbox allows. So the proxy finds the package in npx's cache
 * itself, outside, and starts its bin with Node directly; the sandbox then shows that one
 * package directory read-only.
 */
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Launch } from './launch.js';
import { findOnPath } from '../common/find-on-path.js';
import type { ProgramContext } from './program.js';

/** npx options that take no value and change nothing here. */
const FLAGS = new Set(['-y', '--yes', '-q', '--quiet', '--no']);

/** `@scope/name@1.2.3` to its name and version or range. */
export function parseSpec(spec: string): { name: string; version: string | undefined } {
  const at = spec.indexOf('@', spec.startsWith('@') ? 1 : 0);
  return at <= 0
    ? { name: spec, version: undefined }
    : { name: spec.slice(0, at), version: spec.slice(at + 1) };
}

const parts = (v: string): number[] => v.split(/[.+-]/).map((x) => Number.parseInt(x, 10) || 0);
function newer(a: string, b: string): boolean {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0);
  }
  return false;
}

interface Found {
  dir: string;
  version: string;
  bin: string;
}

async function cached(cache: string, name: string): Promise<Found[]> {
  let entries: string[];
  try {
    entries = await readdir(join(cache, '_npx'));
  } catch {
    return [];
  }
  const out: Found[] = [];
  for (const e of entries) {
    const dir = join(cache, '_npx', e, 'node_modules', name);
    try {
      const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as {
        version?: string;
        bin?: string | Record<string, string>;
      };
      const bins = typeof pkg.bin === 'string' ? { [basename(name)]: pkg.bin } : (pkg.bin ?? {});
      const bin = bins[basename(name)] ?? Object.values(bins)[0];
      if (bin !== undefined) out.push({ dir, version: pkg.version ?? '0', bin: join(dir, bin) });
    } catch {
      // not in this entry
    }
  }
  return out;
}

/** The launch with `npx PKG` replaced by `node BIN`, or why that is not possible. */
export async function resolveNpx(
  launch: Launch,
  ctx: ProgramContext,
): Promise<{ launch: Launch } | { problem: string }> {
  if (basename(launch.command) !== 'npx') return { launch };
  let i = 0;
  while (i < launch.args.length && FLAGS.has(launch.args[i]!)) i++;
  const spec = launch.args[i];
  if (spec === undefined || spec.startsWith('-')) {
    return {
      problem: `under --sandbox the proxy runs npx's package itself and understands only npx [-y] PACKAGE[@VERSION] ARGS; start the package's bin with node instead (found ${JSON.stringify(spec ?? '')})`,
    };
  }
  const { name, version } = parseSpec(spec);
  const cache = ctx.env.npm_config_cache ?? join(ctx.home, '.npm');
  const all = await cached(cache, name);
  const fits = version === undefined ? all : all.filter((f) => f.version === version);
  const best = fits.reduce<Found | undefined>(
    (a, f) => (a === undefined || newer(f.version, a.version) ? f : a),
    undefined,
  );
  const node = await findOnPath('node', ctx.env, ctx.cwd);
  if (best === undefined || node === undefined) {
    return {
      problem: `${spec} is not in npx's cache (${join(cache, '_npx')}), and a sandboxed server cannot install it: run  (cd ~ && npx -y -p ${spec} true)  once outside the sandbox, from a directory whose node_modules does not hold it (npx caches nothing when a project has its own copy), or install it with npm install -g ${spec} and start its bin`,
    };
  }
  return {
    launch: { ...launch, command: node, args: [best.bin, ...launch.args.slice(i + 1)] },
  };
}
