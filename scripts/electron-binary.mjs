// Where Electron's executable is, looked up on disk only: since Electron 42, require('electron')
// downloads the binary when it is missing. Shared by `npm start` and the Electron e2e specs.
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

/** The Electron executable for the project at `root`, or null. Honours ELECTRON_OVERRIDE_DIST_PATH. */
export function electronExecutablePath(root) {
  const require = createRequire(join(root, 'package.json'))
  let dir
  try {
    dir = dirname(require.resolve('electron/package.json'))
  } catch {
    return null
  }
  const pathTxt = join(dir, 'path.txt')
  const exe = existsSync(pathTxt) ? readFileSync(pathTxt, 'utf8').trim() : ''
  const override = process.env.ELECTRON_OVERRIDE_DIST_PATH
  if (override) {
    const p = join(override, exe || (process.platform === 'win32' ? 'electron.exe' : 'electron'))
    return existsSync(p) ? p : null
  }
  if (!exe) return null
  const p = join(dir, 'dist', exe)
  return existsSync(p) ? p : null
}
