import { resolve } from 'node:path'
import vue from '@vitejs/plugin-vue'
import { defineConfig } from 'vitest/config'

// Three projects: Node-side unit/integration tests (real worker processes), renderer component
// tests in happy-dom, and end-to-end specs (Chromium via playwright-core; Electron when present).
// The end-to-end specs run after the other two (groupOrder), one file at a time: the advice spec
// fits lines to a sweep's times, which the other projects' parallel load made too noisy to trust
// (R² 0.89 < 0.9 on this 2-core machine). `auto` follows the backend table's order in tests
// (TRAINPOOL_AUTO=order): a calibration times every backend for seconds on first use, in every temp
// store; the calibration's own tests ask for it (service/auto-calibration.test.ts, cli/calibrate.test.ts).
const resolveShared = { alias: { '@shared': resolve(__dirname, 'src-shared') } }
const autoByTableOrder = { TRAINPOOL_AUTO: 'order' }

export default defineConfig({
  test: {
    globalSetup: ['src-main/testing/scratch-tmpdir.ts'],
    projects: [
      {
        resolve: resolveShared,
        test: {
          name: 'node',
          include: ['src-main/**/*.test.ts', 'src-shared/**/*.test.ts', 'benchmarks/**/*.test.ts'],
          environment: 'node',
          sequence: { groupOrder: 0 },
          testTimeout: 120_000,
          hookTimeout: 120_000,
          pool: 'forks',
          env: autoByTableOrder,
        },
      },
      {
        plugins: [vue()],
        resolve: resolveShared,
        test: {
          name: 'web',
          include: ['src-renderer/**/*.test.ts'],
          environment: 'happy-dom',
          sequence: { groupOrder: 0 },
        },
      },
      {
        resolve: resolveShared,
        test: {
          name: 'e2e',
          include: ['e2e/**/*.spec.ts'],
          environment: 'node',
          testTimeout: 180_000,
          hookTimeout: 180_000,
          pool: 'forks',
          env: autoByTableOrder,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
})
