import { resolve } from 'node:path'
import vue from '@vitejs/plugin-vue'
import { defineConfig } from 'electron-vite'

// Custom folders (DESIGN.md layout), so every entry is named explicitly (electron-vite only looks
// in src/<scope> by default). Main, worker and CLI are separate entries that share code via chunks.
// src-shared/ (contract, verdict, formatters, estimate) is the one folder both sides import, as @shared.
const resolveShared = { alias: { '@shared': resolve(__dirname, 'src-shared') } }

export default defineConfig({
  main: {
    resolve: resolveShared,
    build: {
      // the PDF renderer drives a system Chromium through playwright-core: load it from node_modules
      externalizeDeps: { include: ['playwright-core'] },
      rolldownOptions: {
        input: {
          index: resolve(__dirname, 'src-main/app/main.ts'),
          worker: resolve(__dirname, 'src-main/worker/index.ts'),
          cli: resolve(__dirname, 'src-main/cli/index.ts'),
        },
      },
    },
  },
  preload: {
    resolve: resolveShared,
    // A sandboxed preload may only require electron/events/timers/url: bundle everything else.
    build: {
      externalizeDeps: false,
      rolldownOptions: {
        input: { index: resolve(__dirname, 'src-preload/index.ts') },
        output: { format: 'cjs' },
      },
    },
  },
  renderer: {
    resolve: resolveShared,
    root: resolve(__dirname, 'src-renderer'),
    build: {
      rolldownOptions: {
        input: {
          index: resolve(__dirname, 'src-renderer/index.html'),
          // the printable report (PDF): Electron's hidden window and headless Chromium load it
          report: resolve(__dirname, 'src-renderer/report.html'),
        },
      },
    },
    plugins: [vue()],
  },
})
