// The one place the desktop shell builds the real service (tests inject a fake instead). Runs go
// to the same store as the CLI's (~/.trainpool/runs, or TRAINPOOL_STORE), so both see one history.
import { BenchService } from '../service/bench-service'
import type { BenchServiceApi } from '../service/types'
import type { WorkerLauncher } from '../pool/launcher'
import { RunStore, defaultStoreDir } from '../store/run-store'
import { cancelJobsOfRun } from '../pool/slurm/slurm-engine'

export interface ServiceFactoryContext {
  launcher: WorkerLauncher
  /** run store folder; undefined → the default shared with the CLI */
  storeDir?: string
  appVersion?: string
  /** the desktop's open dialog for a data file (app/data-file-dialog.ts) */
  pickDataFile?: () => Promise<string | null>
}

export type ServiceFactory = (context: ServiceFactoryContext) => BenchServiceApi | Promise<BenchServiceApi>

export const createBenchService: ServiceFactory = ({ launcher, storeDir, appVersion, pickDataFile }) => {
  const store = new RunStore(storeDir ?? defaultStoreDir())
  // runs a crashed process left "running" are marked interrupted (as the CLI does); never blocks start-up
  store.markInterrupted(null, cancelJobsOfRun).catch((err: unknown) => console.warn(`trainpool: could not check ${store.dir}: ${(err as Error)?.message ?? err}`))
  return new BenchService({ launcher, store, shell: 'electron', pickDataFile, ...(appVersion ? { appVersion } : {}) })
}
