/**
 * Whether a sandbox's mounts are the ones its layout planned, from the gate's
 * /proc/self/mountinfo (sandbox-gate.ts) and the host's. Pure: the caller reads both.
 *
 * A bind is where it was planned when a mount sits at its destination with the planned source:
 * the same filesystem (major:minor) and the same path inside it (mountinfo's `root`), which the
 * host's own mount table gives for the source path. A link followed in the source changes the
 * `root`; a link followed in the destination puts the mount elsewhere, and none is left at the
 * planned path. Read-only or not must match too. Each planned mount needs a mount of its own
 * (two plans of the same bind need two), so a redirected one cannot hide behind another.
 */
import type { SandboxOp } from './sandbox.js';

/** One line of /proc/PID/mountinfo, the fields the check needs. */
export interface MountEntry {
  id: number;
  parent: number;
  /** major:minor of the filesystem. */
  device: string;
  /** The path inside that filesystem the mount shows (a bind's source). */
  root: string;
  /** Where it is mounted, as the reading process sees it. */
  at: string;
  readOnly: boolean;
  fsType: string;
}

/**
 * A path field as the kernel wrote it (read as latin1: one character a byte) back to the path:
 * mountinfo escapes space, tab, newline and backslash as three octal digits; the rest is UTF-8.
 */
function unescape(field: string): string {
  const bytes: number[] = [];
  const raw = Buffer.from(field, 'latin1');
  for (let i = 0; i < raw.length; i++) {
    const digits = raw.subarray(i + 1, i + 4).toString('latin1');
    if (raw[i] === 0x5c && /^[0-7]{3}$/.test(digits)) {
      bytes.push(parseInt(digits, 8));
      i += 3;
    } else bytes.push(raw[i]!);
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The entries of a mountinfo text (read as latin1, so that any byte of a path survives). */
export function parseMountinfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const dash = fields.indexOf('-', 6);
    if (fields.length < 10 || dash < 0) continue;
    out.push({
      id: Number(fields[0]),
      parent: Number(fields[1]),
      device: fields[2]!,
      root: unescape(fields[3]!),
      at: unescape(fields[4]!),
      readOnly: fields[5]!.split(',').includes('ro'),
      fsType: fields[dash + 1]!,
    });
  }
  return out;
}

const inside = (path: string, dir: string): boolean =>
  path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`);

/**
 * Where the host's `path` lives: the filesystem and the path inside it, from the mount that shows
 * it (the deepest mount point above it; of mounts stacked on one point, the one on top).
 */
export function hostSource(
  host: readonly MountEntry[],
  path: string,
): { device: string; root: string } | undefined {
  let deepest = '';
  for (const m of host) if (inside(path, m.at) && m.at.length > deepest.length) deepest = m.at;
  const here = host.filter((m) => m.at === deepest);
  const best = here.find((m) => !here.some((o) => o.parent === m.id)) ?? here.at(-1);
  if (best === undefined) return undefined;
  const rest = path.slice(best.at === '/' ? 0 : best.at.length);
  const root = best.root === '/' ? rest || '/' : rest === '' ? best.root : best.root + rest;
  return { device: best.device, root };
}

/** What the sandbox shows that its layout did not plan, one line each; empty when it matches. */
export function mountProblems(
  layout: readonly SandboxOp[],
  sandbox: readonly MountEntry[],
  host: readonly MountEntry[],
): string[] {
  const problems: string[] = [];
  const used = new Set<MountEntry>();
  const take = (ok: (m: MountEntry) => boolean): boolean => {
    const found = sandbox.find((m) => !used.has(m) && ok(m));
    if (found !== undefined) used.add(found);
    return found !== undefined;
  };
  for (const op of layout) {
    if (op.op === 'bind') {
      const source = hostSource(host, op.source);
      const ok =
        source !== undefined &&
        take(
          (m) =>
            m.at === op.dest &&
            m.device === source.device &&
            m.root === source.root &&
            m.readOnly === op.readOnly,
        );
      if (!ok) {
        const what = op.source === op.dest ? op.dest : `${op.source} on ${op.dest}`;
        const found = sandbox.filter((m) => m.at === op.dest);
        const instead =
          found.length === 0
            ? 'nothing is mounted there'
            : `found ${found.map((m) => `${m.root} (${m.device}${m.readOnly ? ', read-only' : ''})`).join(', ')}`;
        problems.push(
          `${what}${op.readOnly ? ' (read-only)' : ''} is not mounted as planned: ${instead}`,
        );
      }
    } else if (op.op === 'tmpfs' && op.readOnly) {
      if (!take((m) => m.at === op.dest && m.fsType === 'tmpfs' && m.readOnly)) {
        problems.push(`${op.dest} (hidden) is not an empty read-only directory as planned`);
      }
    } else if (op.op === 'remount-ro') {
      if (!sandbox.some((m) => m.at === op.dest && m.fsType === 'tmpfs' && m.readOnly)) {
        problems.push(`${op.dest} is not read-only as planned`);
      }
    }
  }
  return problems;
}
