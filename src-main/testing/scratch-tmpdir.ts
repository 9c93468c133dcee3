// Vitest's global setup: the whole test run writes its temporary files under one scratch folder,
// removed when the run ends. Tests (and the workers, CLIs and browsers they start) make their temp
// folders with os.tmpdir(), which reads TMPDIR; many never removed theirs, and each run of the suite
// left about 300 folders in /tmp (some of them 150 MB). Setting TMPDIR here, before Vitest forks its
// test workers, reaches every process a test starts (workers, CLIs, Chromium), so nothing a test
// forgets outlives the run.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export function setup(): () => void {
  const previous = process.env.TMPDIR
  const scratch = mkdtempSync(join(tmpdir(), 'trainpool-tests-'))
  process.env.TMPDIR = scratch
  return () => {
    if (previous === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = previous
    rmSync(scratch, { recursive: true, force: true })
  }
}
