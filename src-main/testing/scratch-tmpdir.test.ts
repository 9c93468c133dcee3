// The run's scratch folder (scratch-tmpdir.ts, Vitest's global setup) is where tests and what they start write.
import { execFileSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { basename } from 'node:path'
import { describe, expect, it } from 'vitest'

describe("the test run's scratch folder", () => {
  it('is os.tmpdir() here and in a process a test starts', () => {
    expect(basename(tmpdir())).toMatch(/^trainpool-tests-/)
    expect(execFileSync(process.execPath, ['-p', 'require("node:os").tmpdir()'], { encoding: 'utf8' }).trim()).toBe(tmpdir())
  })
})
