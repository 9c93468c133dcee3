import vue from '@vitejs/plugin-vue'
import { defineConfig } from 'vitest/config'

// Three projects: Node-side unit/integration tests (real worker processes), renderer component
// tests in happy-dom, and end-to-end specs (Chromium via playwright-core; Electron when present).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'node',
          include: ['src-main/**/*.test.ts', 'benchmarks/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
          hookTimeout: 120_000,
          pool: 'forks',
        },
      },
      {
        plugins: [vue()],
        test: {
          name: 'web',
          include: ['src-renderer/**/*.test.ts'],
          environment: 'happy-dom',
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['e2e/**/*.spec.ts'],
          environment: 'node',
          testTimeout: 180_000,
          hookTimeout: 180_000,
          pool: 'forks',
          fileParallelism: false,
        },
      },
    ],
  },
})
