// The one place the desktop shell builds the real service (tests inject a fake instead).
import { BenchService } from '../service/bench-service'
import type { BenchServiceApi } from '../service/types'
import type { WorkerLauncher } from '../pool/launcher'

export interface ServiceFactoryContext {
  launcher: WorkerLauncher
  /** run store folder; undefined → the service's default (shared with the CLI) */
  storeDir?: string
}

export type ServiceFactory = (context: ServiceFactoryContext) => BenchServiceApi | Promise<BenchServiceApi>

export const createBenchService: ServiceFactory = ({ launcher, storeDir }) =>
  new BenchService({ launcher, shell: 'electron', ...(storeDir ? { store: { dir: storeDir } } : {}) })
