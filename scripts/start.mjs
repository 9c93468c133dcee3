#!/usr/bin/env node
// `npm start`: build and launch the desktop app. Since Electron 42 the `electron` package no longer
// downloads its binary on install, and require('electron') from Node would start a download, so
// the binary is looked for on disk only. Without it we say how to get it, and what works anyway.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { electronExecutablePath } from './electron-binary.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(join(root, 'package.json'))

/** Path of the Electron executable if it is on disk, else null (never downloads). */
const electronExecutable = () => electronExecutablePath(root)

/** electron-vite's CLI script (its package "exports" hide bin/, so walk up from its entry). */
function electronViteCli() {
  let dir = dirname(require.resolve('electron-vite'))
  while (!existsSync(join(dir, 'bin', 'electron-vite.js'))) {
    const up = dirname(dir)
    if (up === dir) throw new Error('trainpool: electron-vite is not installed (run npm install)')
    dir = up
  }
  return join(dir, 'bin', 'electron-vite.js')
}

function run(args, env) {
  const cli = electronViteCli()
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: root, stdio: 'inherit', env })
  if (r.error) throw r.error
  return r.status ?? 1
}

const exe = electronExecutable()
if (!exe) {
  console.error(
    [
      'trainpool: the Electron binary is not installed, so the desktop app cannot start.',
      '  - to get it (needs network once): npx install-electron --no   then run `npm start` again;',
      '    or point ELECTRON_OVERRIDE_DIST_PATH at a folder holding an Electron 45 build;',
      '  - without it, `npx trainpool serve` gives the same UI in your browser,',
      '    and `npx trainpool bench` runs benchmarks headless.',
    ].join('\n'),
  )
  process.exit(1)
}

// electron-vite finds Electron through path.txt; ELECTRON_EXEC_PATH covers the override case too.
const env = { ...process.env, ELECTRON_EXEC_PATH: process.env.ELECTRON_EXEC_PATH || exe }
delete env.ELECTRON_RUN_AS_NODE
const extra = process.argv.slice(2)
const built = run(['build'], env)
if (built !== 0) process.exit(built)
process.exit(run(['preview', '--skipBuild', ...extra], env))
