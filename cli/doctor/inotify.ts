/**
 * inotify: the kernel's per-user limits (instances, watches), how many this user's processes use
 * now, and whether the policy's watches fit. The daemon watches each directory of its plan once.
 */
import { readdir, readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fail, ok, warn, type Check } from './check.js';

export interface InotifyUse {
  instances: number;
  watches: number;
}

async function readNumber(file: string): Promise<number | undefined> {
  try {
    const n = Number((await readFile(file, 'utf8')).trim());
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/** The inotify instances and watches held by processes of `uid` (those whose /proc entries we can read). */
export async function inotifyInUse(proc: string, uid: number): Promise<InotifyUse> {
  const use = { instances: 0, watches: 0 };
  for (const pid of await readdir(proc).catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if ((await stat(join(proc, pid))).uid !== uid) continue;
      const fdDir = join(proc, pid, 'fd');
      for (const fd of await readdir(fdDir)) {
        const target = await readlink(join(fdDir, fd)).catch(() => '');
        if (target !== 'anon_inode:inotify') continue;
        use.instances++;
        const info = await readFile(join(proc, pid, 'fdinfo', fd), 'utf8').catch(() => '');
        use.watches += info.split('\n').filter((l) => l.startsWith('inotify ')).length;
      }
    } catch {
      // the process ended, or is not ours to read
    }
  }
  return use;
}

/**
 * The inotify lines: `needed` is the number of directories the policy makes the daemon watch;
 * `daemonRunning` says whether those are already part of `use`.
 */
export async function inotifyChecks(
  procSys: string,
  use: InotifyUse,
  needed: number | undefined,
  daemonRunning: boolean,
): Promise<Check[]> {
  const maxInstances = await readNumber(join(procSys, 'fs/inotify/max_user_instances'));
  const maxWatches = await readNumber(join(procSys, 'fs/inotify/max_user_watches'));
  const out: Check[] = [];
  if (maxInstances === undefined || maxWatches === undefined) {
    return [
      warn(
        'inotify',
        `cannot read the limits under ${procSys}/fs/inotify; watching may still work`,
      ),
    ];
  }
  const persist = (key: string, value: number) => [
    `sudo sysctl -w ${key}=${value}`,
    `and keep it: echo ${key}=${value} | sudo tee /etc/sysctl.d/60-inotify.conf`,
  ];
  const freeInstances = maxInstances - use.instances;
  const instanceLine = `${use.instances} of ${maxInstances} in use`;
  if (!daemonRunning && freeInstances < 1) {
    out.push(
      fail(
        'inotify instances',
        `${instanceLine}; mcp-rootsd needs one more`,
        persist('fs.inotify.max_user_instances', Math.max(1024, maxInstances * 2)),
      ),
    );
  } else if (freeInstances < 8) {
    out.push(
      warn(
        'inotify instances',
        `${instanceLine}; nearly all used`,
        persist('fs.inotify.max_user_instances', Math.max(1024, maxInstances * 2)),
      ),
    );
  } else out.push(ok('inotify instances', instanceLine));
  const more = daemonRunning ? 0 : (needed ?? 0);
  const watchLine = `${use.watches} of ${maxWatches} in use; the policy needs ${needed === undefined ? 'an unknown number' : needed}${daemonRunning ? ' (already counted: mcp-rootsd is running)' : ''}`;
  const want = Math.max(524288, (use.watches + more) * 2);
  if (use.watches + more > maxWatches) {
    out.push(
      fail(
        'inotify watches',
        `${watchLine}; that does not fit`,
        persist('fs.inotify.max_user_watches', want),
      ),
    );
  } else if (use.watches + more > maxWatches * 0.9) {
    out.push(
      warn(
        'inotify watches',
        `${watchLine}; over 90% of the limit`,
        persist('fs.inotify.max_user_watches', want),
      ),
    );
  } else out.push(ok('inotify watches', watchLine));
  return out;
}
