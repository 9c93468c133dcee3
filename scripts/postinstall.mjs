// Fetches Electron's binary when online. Since Electron 42 the `electron` package no longer
// downloads itself, but electron-vite 6 still reads node_modules/electron/path.txt
// (alex8088/electron-vite#904). Offline, `npm install` must still succeed: we explain instead.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const require = createRequire(import.meta.url)
let electronDir
try {
  electronDir = dirname(require.resolve('electron/package.json'))
} catch {
  process.exit(0) // production install without devDependencies: nothing to do
}
if (existsSync(join(electronDir, 'path.txt'))) process.exit(0)
if (process.env.TRAINPOOL_SKIP_ELECTRON_DOWNLOAD) {
  console.log('trainpool: TRAINPOOL_SKIP_ELECTRON_DOWNLOAD set; not fetching the Electron binary.')
  process.exit(0)
}
const result = spawnSync(process.execPath, [join(electronDir, 'install.js'), '--no'], {
  stdio: ['ignore', 'ignore', 'pipe'],
  timeout: 180_000,
})
if (result.status === 0 && existsSync(join(electronDir, 'path.txt'))) {
  console.log('trainpool: Electron binary installed.')
} else {
  console.log(
    [
      'trainpool: the Electron binary could not be downloaded (offline?). Everything else is installed.',
      '  - the desktop app needs it: when online, run `npx install-electron --no`, then `npm start`;',
      '  - without it, `npx trainpool serve` gives the same UI in a browser, and `npx trainpool bench` runs headless.',
    ].join('\n'),
  )
}
