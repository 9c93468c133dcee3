import tseslint from 'typescript-eslint'
import vue from 'eslint-plugin-vue'
import prettier from 'eslint-config-prettier'
import { dirname, resolve, sep } from 'node:path'

/** What no shared module imports (a later block for src-shared/ files repeats these: a block's rule options replace an earlier one's). */
const SHARED_ONLY = [
  { group: ['**/src-main/**', '**/src-renderer/**', '**/src-preload/**'], message: 'shared code imports only shared code' },
  { group: ['node:*'], message: 'shared code runs in the renderer too: no Node built-ins' },
]

/**
 * A scheduler's folder is its own (docs/ARCHITECTURE.md, the launcher seam): everything else reaches
 * a scheduler through the registry (src-main/pool/schedulers.ts: schedulerFor, allSchedulers) and its
 * launcher spec (src-shared/contract/launcher.ts), so a second one never means editing the service,
 * the CLI or the UI. Relative imports are resolved against the importing file, so `../slurm/x` and
 * `../../pool/slurm/x` are both caught. A new scheduler's folder is one more entry here.
 */
const SCHEDULER_FOLDERS = ['src-main/pool/slurm'].map((folder) => resolve(import.meta.dirname, folder))
const schedulerSeam = {
  rules: {
    'scheduler-folder-is-its-own': {
      meta: {
        type: 'problem',
        schema: [],
        messages: {
          inside:
            "{{folder}} is its scheduler's own: import the registry (src-main/pool/schedulers.ts) or the launcher spec (@shared/contract/launcher) instead",
        },
      },
      create(context) {
        const check = (node) => {
          const spec = node.source?.value
          if (typeof spec !== 'string' || !spec.startsWith('.')) return
          const target = resolve(dirname(context.filename), spec)
          const folder = SCHEDULER_FOLDERS.find((f) => target === f || target.startsWith(f + sep))
          if (folder) context.report({ node: node.source, messageId: 'inside', data: { folder: folder.slice(import.meta.dirname.length + 1) } })
        }
        return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check }
      },
    },
  },
}

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
    files: ['**/*.{ts,mts,vue}'],
    ignores: ['src-main/pool/slurm/**', 'src-main/pool/schedulers.ts'],
    plugins: { 'scheduler-seam': schedulerSeam },
    rules: { 'scheduler-seam/scheduler-folder-is-its-own': 'error' },
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
