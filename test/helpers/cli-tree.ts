/** A fixture for rootsctl tests: a home with a project, its secret and documents, and a policy for them. */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shortDir } from './short-dir.js';

/** `<dir>/home/{proj/secret,docs,proj-evil}` and `<dir>/p.yaml` giving server `fs` the project and the documents. */
export function policyTree() {
  const dir = shortDir();
  for (const p of ['home/proj/secret', 'home/docs', 'home/proj-evil'])
    mkdirSync(join(dir, p), { recursive: true });
  const policy = `version: 1
deny: [~/proj/secret]
servers:
  fs:
    roots:
      - path: ~/proj
      - {path: ~/docs, readOnly: true, name: Documents}
`;
  writeFileSync(join(dir, 'p.yaml'), policy);
  return { dir, home: join(dir, 'home'), real: realpathSync(dir), config: join(dir, 'p.yaml') };
}
