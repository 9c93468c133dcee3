// The one place a shell gets its service: the run store opened (or none: runs kept in memory), runs
// a dead process left "running" marked interrupted with their scheduler jobs cancelled, and the
// BenchService over it. The app, `bench`, `serve`, `advise` and `calibrate` all open it here.
import { NodeLauncher } from '../pool/node-launcher'
import { tidyDataCache } from '../data/cache'
import { cancelJobsOfRun } from '../pool/schedulers'
import { RunStore } from '../store/run-store'
import { BenchService, type BenchServiceOptions } from './bench-service'

export interface OpenServiceOptions extends Omit<BenchServiceOptions, 'store' | 'launcher' | 'dataDir'> {
  /** the store's folder: runs, the data cache and the calibration live there */
  storeDir: string
  /** false: runs are not kept (--no-save); the data cache and calibration still use storeDir */
  keepRuns?: boolean
  /** default: worker processes through Node (the app passes Electron's utility processes) */
  launcher?: BenchServiceOptions['launcher']
  /** the start-up check of the store: awaited (CLI), or in the background (the app must not wait on a slow disk) */
  storeCheck?: 'await' | 'background'
}

export interface OpenedService {
  service: BenchService
  store: RunStore | null
}

export async function openService(options: OpenServiceOptions): Promise<OpenedService> {
  const { storeDir, keepRuns = true, launcher = new NodeLauncher(), storeCheck = 'await', ...rest } = options
  const store = keepRuns ? new RunStore(storeDir) : null
  const service = new BenchService({ ...rest, launcher, store, dataDir: storeDir })
  if (store) {
    const checked = checkStoreAtStartUp(store)
    if (storeCheck === 'await') await checked.catch(() => [])
    else checked.catch((err: unknown) => console.warn(`trainpool: could not check ${store.dir}: ${(err as Error)?.message ?? err}`))
  }
  return { service, store }
}

/** The start-up check: runs a dead process left running marked interrupted (their scheduler's jobs cancelled), the store and its data cache tidied. */
export async function checkStoreAtStartUp(store: RunStore): Promise<string[]> {
  const marked = await store.markInterrupted(null, cancelJobsOfRun)
  await tidyDataCache(store.dir)
  return marked
}
