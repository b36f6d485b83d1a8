/**
 * The validator compiled at build time is the one roots.schema.json compiles to today, and it
 * loads without ajv: a schema edit without a rebuild fails here, not in a user's daemon.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { REPO } from '../helpers/repo.js';

const root = REPO + '/';

void t.test('policies/schema-validator.ts matches roots.schema.json', async (t) => {
  const { generate } = (await import(`${root}scripts/build-validator.mjs`)) as {
    generate: () => string;
  };
  t.equal(
    readFileSync(`${root}policies/schema-validator.ts`, 'utf8'),
    generate(),
    'run `npm run build` to regenerate it',
  );
});

void t.test('the generated validator needs nothing of ajv at run time', (t) => {
  const text = readFileSync(`${root}policies/schema-validator.ts`, 'utf8');
  t.notMatch(text, /require\(|from ['"]ajv/);
  t.end();
});
