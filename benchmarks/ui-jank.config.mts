// Vitest config for the UI jank benchmark only (kept out of `npm test`: its include matches no test glob).
import { fileURLToPath } from 'node:url'
import vue from '@vitejs/plugin-vue'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  plugins: [vue()],
  resolve: { alias: { '@shared': fileURLToPath(new URL('../src-shared', import.meta.url)) } },
  test: {
    name: 'ui-jank',
    include: ['benchmarks/ui-jank.run.mts'],
    environment: 'happy-dom',
    testTimeout: 120_000,
  },
})
