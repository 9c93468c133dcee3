// A WorkerLauncher whose "workers" run the real worker message loop (worker/loop.ts) inside the
// test process, with a family lookup of the test's choosing: how a test trains a family that only
// it registers, through the real pool, runner and service. Messages are structured-cloned, as IPC
// would copy them; exit and kill end the loop and report an exit, as a process would. `onReceive`
// sees each message as a worker's loop receives it (tests of what a worker is sent, and when).
import type { FromWorker, ToWorker } from '@shared/contract'
import type { WorkerFamilyLookup } from '../engine/families'
import type { LaunchOptions, WorkerExit, WorkerHandle, WorkerLauncher } from '../pool/launcher'
import { serveWorker } from '../worker/loop'
import { familyKinds } from '@shared/families'
import { probeFamilies } from '../engine/families/seam'

export class InProcessLauncher implements WorkerLauncher {
  readonly kind = 'node' as const
  launched = 0

  constructor(
    private readonly families: WorkerFamilyLookup,
    private readonly options: { onReceive?: (workerIndex: number, message: ToWorker) => void } = {},
  ) {}

  /** The probe a worker process answers: every registered family's backend table (a family without one reports none). */
  private probe() {
    const tables = familyKinds().flatMap((kind) => {
      const family = this.families(kind) as { backends?: unknown } | undefined
      return family && Array.isArray(family.backends) ? [family] : []
    })
    return probeFamilies(tables as never)
  }

  launch(launchOptions: LaunchOptions): WorkerHandle {
    this.launched++
    const toHandle = new Set<(m: FromWorker) => void>()
    const toWorker = new Set<(m: ToWorker) => void>()
    const exits = new Set<(e: WorkerExit) => void>()
    const parentGone = new Set<() => void>()
    let alive = true
    const end = (exit: WorkerExit) => {
      if (!alive) return
      alive = false
      for (const l of parentGone) l()
      setImmediate(() => exits.forEach((l) => l(exit)))
    }
    serveWorker(
      {
        post: (m) => {
          if (alive) setImmediate(() => toHandle.forEach((l) => l(structuredClone(m))))
        },
        onMessage: (l) => toWorker.add(l),
        onParentGone: (l) => parentGone.add(l),
        exit: (code) => end({ code, signal: null }),
      },
      { families: this.families, probe: () => this.probe(), heartbeatMs: 200 },
    )
    return {
      pid: undefined,
      send: (m) => {
        if (!alive) return
        setImmediate(() => {
          if (!alive) return
          this.options.onReceive?.(launchOptions.workerIndex, m)
          toWorker.forEach((l) => l(structuredClone(m)))
        })
      },
      onMessage: (l) => toHandle.add(l),
      onStderr: () => {},
      onExit: (l) => exits.add(l),
      kill: (signal) => end({ code: null, signal }),
    }
  }
}
