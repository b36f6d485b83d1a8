// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Every policy glob is compiled in one dialect (common/glob-dialect.ts): picomatch alone reads a
 * name's parentheses and bars as regular-expression syntax.
 */
const PICOMATCH_THROUGH_DIALECT = {
  name: 'picomatch',
  message:
    'Compile policy globs through common/glob-dialect.js (parentheses and bars are literal).',
};

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      '.tap/',
      // what the demo, CI and the benchmarks leave behind (git ignores it too)
      '.tmp/',
      'bench/results/',
      // generated from roots.schema.json by scripts/build-validator.mjs
      'policies/schema-validator.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: ['*.js', 'bench/*.js', 'scripts/*.mjs'],
          // The repository's scripts and configs, a dozen small files outside every tsconfig.
          maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 16,
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // policies/index.ts is the engine's only door: what lies behind it may change without the
    // daemon, CLI or proxy noticing. The engine's own unit tests (test/policies/) test its
    // parts one by one and may open them.
    files: ['**/*.ts', '**/*.js', '**/*.mjs'],
    ignores: ['policies/**', 'test/policies/**', 'common/glob-dialect.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [PICOMATCH_THROUGH_DIALECT],
          patterns: [
            {
              regex: '(^|/)policies/(?!index\\.js$).+$',
              message:
                'Import the policy engine through policies/index.js; export what you need there.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['policies/**'],
    rules: { 'no-restricted-imports': ['error', { paths: [PICOMATCH_THROUGH_DIALECT] }] },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Tests run compiled from dist/test, so a path relative to a test's own URL points into
      // dist/, where no fixture or source is.
      'no-restricted-syntax': [
        'error',
        {
          selector: "MetaProperty[meta.name='import']",
          message:
            'Tests run compiled from dist/test: take repository paths from test/helpers/repo.ts.',
        },
      ],
    },
  },
  {
    files: ['test/helpers/repo.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // Fixture servers are plain JavaScript run by node, outside the TypeScript project.
    files: ['test/fixtures/**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { projectService: false, project: false, program: null },
      globals: Object.fromEntries(
        ['process', 'Buffer', 'console', 'setTimeout', 'clearTimeout', 'setInterval'].map((g) => [
          g,
          'readonly',
        ]),
      ),
    },
  },
  {
    // Build scripts: plain JavaScript run by Node before the TypeScript build exists.
    files: ['scripts/**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { process: 'readonly', URL: 'readonly' } },
  },
  {
    // The test processes' loader of code-cached bundles, copied into dist/ by bundle-test-deps.mjs.
    files: ['scripts/**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      sourceType: 'commonjs',
      parserOptions: { projectService: false, project: false, program: null },
      globals: {
        process: 'readonly',
        Buffer: 'readonly',
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
      },
    },
    rules: {
      ...tseslint.configs.disableTypeChecked.rules,
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
);
