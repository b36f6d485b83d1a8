/**
 * Where a path leads before it exists: its nearest existing ancestor made canonical, and the rest
 * as it is. The sandbox compares places this way (a base directory of the home, a socket, a pin
 * for a path not made yet), since a link above any of them moves it elsewhere.
 */
import { realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export function whereItWouldBe(p: string): string {
  const rest: string[] = [];
  for (let head = p; ; head = dirname(head)) {
    try {
      return join(realpathSync(head), ...rest.reverse());
    } catch {
      if (dirname(head) === head) return p;
      rest.push(basename(head));
    }
  }
}
