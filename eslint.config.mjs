// The linter, run by `npm test` before the tests: typescript-eslint's recommended rules. Layout is
// prettier's (.prettierrc.json: lines of at most 140 characters), checked in the same step.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // A name that starts with _ is kept on purpose (a parameter a signature needs, a key left out by a rest).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      // Express's request types are extended the way Express documents: `declare global { namespace Express }`.
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
      // TypeScript's own form for a CommonJS module without an ES default (sequelize, the stemmer).
      '@typescript-eslint/no-require-imports': ['error', { allowAsImport: true }],
      // A variable a closure reads before its one assignment (the server, once it listens) stays let.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // toolgate refuses control characters on purpose, and its patterns name them.
      'no-control-regex': 'off',
    },
  },
  {
    // CommonJS by design: sequelize-cli and jest read these with require().
    files: ['**/*.cjs', '**/*.js', '.sequelizerc'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', process: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
