/** Which roots the daemon names an include pattern to (`_meta['mcp-roots/include']`). */
import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { nodeFs } from '../../policies/index.js';
import { allIncludes, includeMeta } from '../../policies/include-meta.js';
import { protectedRules } from '../../policies/protected.js';
import { shortDir } from '../helpers/short-dir.js';

void t.test('the daemon names an include pattern to the roots it concerns', async (t) => {
  const dir = realpathSync(shortDir());
  const home = join(dir, 'home');
  mkdirSync(join(home, '.config', 'mcp-roots.d'), { recursive: true });
  const pattern = join(home, '.config', 'mcp-roots.d', '*.yaml');
  const rules = await protectedRules(nodeFs(), {
    home,
    policyFiles: [join(home, '.config', 'mcp-roots.yaml')],
    includePatterns: [pattern, join(home, 'extra.yaml')],
  });
  const inc = rules.filter((r) => r.include === true);
  t.equal(inc.length, 2, 'the include rules are marked');
  t.ok(
    inc.every((r) => !r.inMeta),
    'and stay out of the denies in _meta',
  );
  t.same(includeMeta(rules, home), [pattern, join(home, 'extra.yaml')], 'a root of the home');
  t.same(
    includeMeta(rules, join(home, '.config', 'mcp-roots.d', 'x')),
    [pattern],
    'a root inside the base',
  );
  t.same(includeMeta(rules, join(home, 'proj')), [], 'a root beside it');
  t.same(includeMeta(rules, '/'), [pattern, join(home, 'extra.yaml')], 'the whole disk');
});

void t.test(
  'a pattern reached through links is also named as written, to every root',
  async (t) => {
    const dir = realpathSync(shortDir());
    const home = join(dir, 'home');
    mkdirSync(join(home, 'dotfiles', 'roots.d'), { recursive: true });
    mkdirSync(join(home, '.config'), { recursive: true });
    symlinkSync(join(home, 'dotfiles', 'roots.d'), join(home, '.config', 'mcp-roots.d'));
    const written = join(home, '.config', 'mcp-roots.d', '*.yaml');
    const resolved = join(home, 'dotfiles', 'roots.d', '*.yaml');
    const rules = await protectedRules(nodeFs(), {
      home,
      policyFiles: [join(home, '.config', 'mcp-roots.yaml')],
      includePatterns: [written],
    });
    t.same(includeMeta(rules, home), [resolved, written], 'a root of the home: both');
    t.same(
      includeMeta(rules, join(home, '.config')),
      [written],
      'a root holding the link only: as written',
    );
    t.same(includeMeta(rules, join(home, 'proj')), [], 'a root beside both: neither');
    t.same(allIncludes(rules), [resolved, written], 'for sandbox.write paths: both');
  },
);
