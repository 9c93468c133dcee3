// The lint rule that keeps a scheduler's folder its own (eslint.config.mjs,
// scheduler-seam/scheduler-folder-is-its-own): an import of pool/slurm/ from anywhere but that
// folder and the registry line (pool/schedulers.ts) is refused, however the path is written, and
// the service that used to import slurm-cli directly is clean.
import { resolve } from 'node:path'
import { ESLint } from 'eslint'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(__dirname, '../..')
const RULE = 'scheduler-seam/scheduler-folder-is-its-own'
const eslint = new ESLint({ cwd: ROOT })

/** The rule's findings on `code` as if it were the file at `path` (relative to the repository). */
async function findings(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: resolve(ROOT, path) })
  return result.messages.filter((m) => m.ruleId === RULE).map((m) => m.message)
}

describe('lint: nothing outside pool/slurm/ imports it', () => {
  it('refuses an import, a re-export and an import() of pool/slurm/ from outside, by any relative path', async () => {
    const said =
      "src-main/pool/slurm is its scheduler's own: import the registry (src-main/pool/schedulers.ts) or the launcher spec (@shared/contract/launcher) instead"
    expect(
      await findings('src-main/service/probe.ts', "import { sbatchAvailable } from '../pool/slurm/slurm-cli'\nexport const a = sbatchAvailable\n"),
    ).toEqual([said])
    expect(await findings('src-main/pool/remote/x.ts', "export { slurmScheduler } from '../slurm/slurm-scheduler'\n")).toEqual([said])
    expect(await findings('src-main/cli/x.ts', "export const load = () => import('../pool/slurm')\n")).toEqual([said])
  })

  it('lets the folder itself and the registry line import it, and leaves look-alike paths alone', async () => {
    expect(
      await findings('src-main/pool/schedulers.ts', "import { slurmScheduler } from './slurm/slurm-scheduler'\nexport const a = slurmScheduler\n"),
    ).toEqual([])
    expect(await findings('src-main/pool/slurm/x.ts', "import { cancel } from './slurm-cli'\nexport const a = cancel\n")).toEqual([])
    expect(await findings('src-main/service/x.ts', "import { slurmAvailable } from '../testing/slurm'\nexport const a = slurmAvailable\n")).toEqual([])
  })

  it('the service, the CLI and the probe pass it', async () => {
    const results = await eslint.lintFiles(
      ['src-main/service/bench-service.ts', 'src-main/service/backend-probe.ts', 'src-main/cli/options.ts'].map((p) => resolve(ROOT, p)),
    )
    expect(results.flatMap((r) => r.messages.filter((m) => m.ruleId === RULE).map((m) => `${r.filePath}: ${m.message}`))).toEqual([])
  })
})
