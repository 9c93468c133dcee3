// Worker process entry (Electron utility process and Node child_process alike): the message loop
// (loop.ts) over the process's parent channel, with the built-in model families. With
// TRAINPOOL_CONNECT set (`trainpool worker --connect URL`, a Slurm task) the same loop runs over the
// authenticated worker socket instead (socket-transport.ts).
import { builtInWorkerFamilies, probeBackends } from '../engine/families'
import { serveWorker } from './loop'
import { connectToCoordinator } from './socket-transport'
import { connectToParent } from './transport'

async function main(): Promise<void> {
  const url = process.env.TRAINPOOL_CONNECT
  const channel = url ? await connectToCoordinator(url) : connectToParent()
  serveWorker(
    { ...channel, exit: (code) => process.exit(code) },
    {
      families: builtInWorkerFamilies,
      probe: probeBackends,
      fault: process.env.TRAINPOOL_TEST_FAULT,
      memoryCapMb: process.env.TRAINPOOL_WORKER_MAX_MEMORY_MB,
    },
  )
}

main().catch((err: Error) => {
  process.stderr.write(`${err.message}\n`)
  process.exit(2)
})
