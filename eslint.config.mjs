import tseslint from 'typescript-eslint'
import vue from 'eslint-plugin-vue'
import prettier from 'eslint-config-prettier'

/** What no shared module imports (a later block for src-shared/ files repeats these: a block's rule options replace an earlier one's). */
const SHARED_ONLY = [
  { group: ['**/src-main/**', '**/src-renderer/**', '**/src-preload/**'], message: 'shared code imports only shared code' },
  { group: ['node:*'], message: 'shared code runs in the renderer too: no Node built-ins' },
]

export default tseslint.config(
  { ignores: ['out/**', 'node_modules/**', 'scratch/**', 'test-artifacts/**', 'bin/**'] },
  ...tseslint.configs.recommended,
  ...vue.configs['flat/recommended'],
  {
    files: ['**/*.vue'],
    languageOptions: { parserOptions: { parser: tseslint.parser } },
  },
  // The direction of imports (docs/ARCHITECTURE.md): the renderer imports only shared code; shared
  // code imports nothing app-specific and no Node built-in; only the worker (with the families'
  // worker halves and test support) imports the engine; main never imports renderer files.
  {
    files: ['src-renderer/**/*.{ts,vue}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ group: ['**/src-main/**', '**/src-main', '**/src-preload/**'], message: 'the renderer imports only @shared code (and its own files)' }],
        },
      ],
    },
  },
  {
    files: ['src-shared/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: SHARED_ONLY }],
    },
  },
  // Shared code's layers: vocabulary/ (the words both import) at the bottom, then families/, then
  // contract/ (whose schemas read the families). A lower layer never imports a higher one.
  {
    files: ['src-shared/vocabulary/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...SHARED_ONLY,
            {
              group: ['**/families', '**/families/**', '**/contract', '**/contract/**'],
              message: 'the vocabulary is the bottom layer: it imports neither families/ nor contract/',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src-shared/families/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...SHARED_ONLY,
            {
              group: ['**/contract', '**/contract/**'],
              message: 'families/ imports the vocabulary (src-shared/vocabulary/), never the contract, which reads the families',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src-main/**/*.ts'],
    ignores: ['src-main/engine/**', 'src-main/worker/**', 'src-main/testing/**', 'src-main/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/engine/**', '**/engine'], message: 'only the worker imports the engine (training code runs in worker processes)' },
            { group: ['**/src-renderer/**'], message: 'main never imports renderer files: move shared code to src-shared/' },
          ],
        },
      ],
    },
  },
  {
    files: ['src-preload/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/src-main/**', '**/src-renderer/**'], message: 'the preload imports only @shared code' }] }],
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'vue/multi-word-component-names': 'off',
      'vue/max-attributes-per-line': 'off',
      'vue/singleline-html-element-content-newline': 'off',
      'vue/html-self-closing': 'off',
    },
  },
  // formatting is Prettier's (npm run lint checks it): ESLint's stylistic rules stand aside
  prettier,
)
