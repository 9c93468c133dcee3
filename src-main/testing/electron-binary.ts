// Finding the Electron binary for the Electron e2e specs (e2e/electron) WITHOUT require('electron'):
// since Electron 42 that require downloads the binary when it is missing (node_modules/electron/index.js).
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { electronExecutablePath as electronExecutableAt } from '../../scripts/electron-binary.mjs'

export const repoRoot = resolve(__dirname, '..', '..')

/** The Electron executable on disk, or null. Honours ELECTRON_OVERRIDE_DIST_PATH like the package does. */
export function electronExecutablePath(): string | null {
  return electronExecutableAt(repoRoot)
}

export function electronBinaryPresent(): boolean {
  return electronExecutablePath() !== null
}

/** Linux needs an X or Wayland display for a window (use xvfb-run in headless CI). */
export function displayAvailable(): boolean {
  if (process.platform !== 'linux') return true
  return Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY)
}

/** TRAINPOOL_REQUIRE=electron[,…] turns "skip when missing" into "fail when missing". */
export function electronRequired(): boolean {
  return (process.env.TRAINPOOL_REQUIRE ?? '').split(/[\s,]+/).some((s) => s.toLowerCase() === 'electron')
}

/** Why the Electron specs cannot run here, or null when they can. */
export function electronUnavailableReason(): string | null {
  if (!electronBinaryPresent()) {
    return 'the Electron binary is not installed (node_modules/electron/path.txt or dist/ missing); fetch it with `npx install-electron --no`'
  }
  if (!displayAvailable()) return 'no display (DISPLAY/WAYLAND_DISPLAY unset); run under xvfb-run'
  if (!existsSync(join(repoRoot, 'out', 'main', 'index.js'))) return 'the app is not built (out/main/index.js missing); run `npm run build`'
  return null
}
