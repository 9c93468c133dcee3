// Worker process entry (Electron utility process and Node child_process alike): the message loop
// (loop.ts) over the process's parent channel, with the built-in model families.
import { builtInWorkerFamilies, probeBackends } from '../engine/families'
import { serveWorker } from './loop'
import { connectToParent } from './transport'

serveWorker(
  { ...connectToParent(), exit: (code) => process.exit(code) },
  {
    families: builtInWorkerFamilies,
    probe: probeBackends,
    fault: process.env.TRAINPOOL_TEST_FAULT,
    memoryCapMb: process.env.TRAINPOOL_WORKER_MAX_MEMORY_MB,
  },
)
