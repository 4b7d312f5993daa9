// @ts-check
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'examples/**', '.temporal/**', 'coverage/**', 'bench/peer/**', '**/*.mjs', 'jest.config.js'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // Workflow code is replayed and must stay deterministic; the core is imported by it.
    files: ['src/workflows/**/*.ts', 'src/core/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [...nodeBuiltins, 'openai', 'zod'].map((name) => ({ name, message: 'workflow-side code must not do IO or import worker-side libraries' })),
          patterns: [
            { group: ['**/activities', '**/activities/*', '**/tools', '**/tools/*', '**/runtime/*', '**/agents/*', '**/plugin/*'], allowTypeImports: true, message: 'workflows may only `import type` from worker-side code' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['@temporalio/*'], message: 'the core is plain TypeScript: no Temporal imports' }] }],
    },
  },
);
