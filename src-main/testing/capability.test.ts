// The build capability: the tests of the built app (out/) skip with a message where it is not
// built, and fail where CI requires the build (TRAINPOOL_REQUIRE=build).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { skipWithoutBuild } from './capability'

const notBuilt = mkdtempSync(join(os.tmpdir(), 'trainpool-not-built-'))
afterEach(() => {
  vi.unstubAllEnvs()
  vi.restoreAllMocks()
})
afterAll(() => rmSync(notBuilt, { recursive: true, force: true }))

describe('skipWithoutBuild', () => {
  it('skips with a message naming the missing bundle and the fix', () => {
    vi.stubEnv('TRAINPOOL_REQUIRE', 'webgpu')
    const written: string[] = []
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true))
    expect(skipWithoutBuild(notBuilt)).toBe(true)
    expect(written.join('')).toMatch(/SKIPPED build tests: the app is not built: .*main[/\\]index\.js is missing \(run `npm run build` first\)/)
  })

  it('fails instead when TRAINPOOL_REQUIRE includes build', () => {
    vi.stubEnv('TRAINPOOL_REQUIRE', 'webgpu,build')
    expect(() => skipWithoutBuild(notBuilt)).toThrow(/TRAINPOOL_REQUIRE includes build, but it is not available here: the app is not built/)
  })

  it('is how the three tests of the built app decide to skip, and CI requires it', () => {
    const root = resolve(__dirname, '..', '..')
    for (const file of ['src-main/app/build.test.ts', 'src-main/app/bundle.test.ts', 'src-main/reliability/security.test.ts']) {
      const source = readFileSync(join(root, file), 'utf8')
      expect(source, file).toMatch(/describe\.skipIf\(notBuilt\)/)
      expect(source, file).toMatch(/const notBuilt = skipWithoutBuild\(\)/)
    }
    expect(readFileSync(join(root, '.ci', 'run'), 'utf8')).toMatch(/TRAINPOOL_REQUIRE=.*[:,-]build\b/)
  })
})
