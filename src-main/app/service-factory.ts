// The one place the desktop shell builds the real service (tests inject a fake instead). Runs go
// to the same store as the CLI's (~/.trainpool/runs, or TRAINPOOL_STORE), so both see one history.
import { openService } from '../service/open-service'
import type { BenchServiceApi } from '../service/types'
import type { WorkerLauncher } from '../pool/launcher'
import { defaultStoreDir } from '../store/run-store'

export interface ServiceFactoryContext {
  launcher: WorkerLauncher
  /** run store folder; undefined → the default shared with the CLI */
  storeDir?: string
  appVersion?: string
  /** the desktop's open dialog for a data file (app/data-file-dialog.ts) */
  pickDataFile?: () => Promise<string | null>
}

export type ServiceFactory = (context: ServiceFactoryContext) => BenchServiceApi | Promise<BenchServiceApi>

export const createBenchService: ServiceFactory = async ({ launcher, storeDir, appVersion, pickDataFile }) => {
  // the store's start-up check (runs a crashed process left "running") never blocks the window
  const { service } = await openService({
    launcher,
    storeDir: storeDir ?? defaultStoreDir(),
    storeCheck: 'background',
    shell: 'electron',
    pickDataFile,
    ...(appVersion ? { appVersion } : {}),
  })
  return service
}
