// Tests skip only for a missing capability, and say so. CI lists what it must test in
// TRAINPOOL_REQUIRE (e.g. "chromium,webgpu"): there, a missing capability is a failure instead.
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'

export function required(capability: string): boolean {
  return (process.env.TRAINPOOL_REQUIRE ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .includes(capability.toLowerCase())
}

/**
 * Returns true when tests needing `capability` should be skipped (with a message on stderr);
 * throws when the capability is missing but TRAINPOOL_REQUIRE demands it.
 */
export function skipWithout(capability: string, available: boolean, why: string): boolean {
  if (available) return false
  if (required(capability)) {
    throw new Error(`TRAINPOOL_REQUIRE includes ${capability}, but it is not available here: ${why}`)
  }
  process.stderr.write(`[trainpool tests] SKIPPED ${capability} tests: ${why} (set up the capability, or see .ci/run)\n`)
  return true
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

export async function waitUntil(predicate: () => boolean, timeoutMs: number, stepMs = 25): Promise<boolean> {
  const end = Date.now() + timeoutMs
  while (Date.now() < end) {
    if (predicate()) return true
    await new Promise((r) => setTimeout(r, stepMs))
  }
  return predicate()
}

/** The electron-vite output (`npm run build`) that the tests of the built app read. */
export const BUILD_OUT = resolve(__dirname, '..', '..', 'out')

/**
 * skipWithout for the `build` capability: true (skip, with a message) when `out` lacks the built
 * main process; throws instead when TRAINPOOL_REQUIRE includes build (CI builds before testing).
 */
export function skipWithoutBuild(out = BUILD_OUT): boolean {
  const mainJs = join(out, 'main', 'index.js')
  return skipWithout('build', existsSync(mainJs), `the app is not built: ${mainJs} is missing (run \`npm run build\` first)`)
}

/** skipWithout for the `xgboost` capability of the xgboost backend: whether libxgboost loads here (engine/xgboost/library). */
export async function skipWithoutLibXgboost(): Promise<boolean> {
  let available = true
  try {
    ;(await import('../engine/xgboost/library')).loadXgboost()
  } catch {
    available = false
  }
  return skipWithout('xgboost', available, 'no libxgboost')
}
