/**
 * Whether a group is one user's alone. On systems with a group per user (Debian, Fedora and most
 * others make one for each account) a directory writable by that group is writable by its user
 * only; a shared group (`users`, a project's group) lets its other members rename what is in it.
 */
import { readFile } from 'node:fs/promises';

/**
 * True when `gid` is the primary group of the user `uid`, of no other user in /etc/passwd, and
 * lists no other member in /etc/group. A group those files do not name (from a directory service)
 * cannot be shown to be private, so it is not.
 */
export async function privateGroup(gid: number, uid: number): Promise<boolean> {
  const [passwd, group] = await Promise.all([
    readFile('/etc/passwd', 'utf8').catch(() => ''),
    readFile('/etc/group', 'utf8').catch(() => ''),
  ]);
  const users = fields(passwd).map((f) => ({ name: f[0], uid: Number(f[2]), gid: Number(f[3]) }));
  const me = users.find((u) => u.uid === uid);
  if (me === undefined || me.gid !== gid) return false;
  if (users.some((u) => u.gid === gid && u.uid !== uid)) return false;
  // Every entry with that gid: a second group name may share it (groupadd -o), with members.
  const entries = fields(group).filter((f) => Number(f[2]) === gid);
  if (entries.length === 0) return false;
  return entries.every((entry) =>
    (entry[3] ?? '').split(',').every((member) => member === '' || member === me.name),
  );
}

/** The colon-separated fields of each line of a passwd-style file (comments and blanks skipped). */
function fields(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => line.split(':'));
}
