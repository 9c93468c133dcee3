// What this machine can run: the backend probe (in a short-lived worker process, so native
// backends never load into main), cached once it succeeds, and the Capabilities the shells show.
import os from 'node:os'
import type { BackendCapability, Capabilities, GpuInfo, LauncherCapability } from '@shared/contract'
import { autoBackendsFrom } from '@shared/families'
import type { WorkerLauncher } from '../pool/launcher'
import { workerEnv } from '../pool/launcher'

export class BackendProbe {
  private probed: Promise<BackendCapability[]> | null = null

  private listed: Promise<GpuInfo[]> | null = null

  private readonly launcherChecked = new Map<string, Promise<LauncherCapability>>()

  constructor(
    private readonly run: () => Promise<BackendCapability[]>,
    private readonly listGpus: () => Promise<GpuInfo[]> = async () => [],
    /** each launcher's check by its engine (the registered schedulers'), read when first asked */
    private readonly launcherChecks: () => Record<string, () => Promise<LauncherCapability>> = () => ({}),
  ) {}

  /** Whether a launcher can submit from here (config.launcher), checked once; a check that throws says why it is unavailable. */
  launcher(engine: string): Promise<LauncherCapability> {
    let checked = this.launcherChecked.get(engine)
    if (!checked) {
      const check = this.launcherChecks()[engine]
      checked = check
        ? check().catch((e: unknown) => ({ available: false, detail: e instanceof Error ? e.message : String(e) }))
        : Promise.resolve({ available: false, detail: `no launcher ${JSON.stringify(engine)} in this build` })
      this.launcherChecked.set(engine, checked)
    }
    return checked
  }

  /** Every launcher's answer, by engine (Capabilities.launchers). */
  async launchers(): Promise<Record<string, LauncherCapability>> {
    const engines = Object.keys(this.launcherChecks())
    return Object.fromEntries(await Promise.all(engines.map(async (engine) => [engine, await this.launcher(engine)] as const)))
  }

  /** The machine's NVIDIA GPUs (nvidia-smi), listed once. */
  gpus(): Promise<GpuInfo[]> {
    this.listed ??= this.listGpus().catch(() => [])
    return this.listed
  }

  /** The probe's answer; a failed probe is retried on the next call. */
  backends(): Promise<BackendCapability[]> {
    if (!this.probed) {
      this.probed = this.run().catch((err) => {
        this.probed = null
        throw err
      })
    }
    return this.probed
  }

  /** What this machine offers; `auto`'s calibration is the service's to add (auto-calibration.ts). */
  async capabilities(shell: Capabilities['shell'], appVersion = 'dev'): Promise<Omit<Capabilities, 'calibration'>> {
    const backends = await this.backends()
    const cpus = os.cpus()
    return {
      backends,
      autoBackends: autoBackendsFrom(backends),
      cpu: cpus[0]?.model?.trim() || os.arch(),
      cpuCount: cpus.length,
      memoryBytes: os.totalmem(),
      freeMemoryBytes: os.freemem(),
      os: `${os.type()} ${os.release()} ${os.arch()}`,
      versions: { trainpool: appVersion, node: process.versions.node, ...(process.versions.electron ? { electron: process.versions.electron } : {}) },
      shell,
      gpus: await this.gpus(),
      launchers: await this.launchers(),
    }
  }
}

/** Runs the backend probe in a short-lived worker process. */
export async function probeInWorker(launcher: WorkerLauncher): Promise<BackendCapability[]> {
  const handle = launcher.launch({ workerIndex: -1, serviceName: 'trainpool-probe', env: workerEnv() })
  let stderr = ''
  handle.onStderr((c) => {
    stderr = (stderr + c).slice(-1000)
  })
  try {
    return await new Promise<BackendCapability[]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('backend probe timed out after 60 s')), 60_000)
      handle.onMessage((m) => {
        if (m.type === 'capabilities') {
          clearTimeout(timer)
          resolve(m.backends)
        }
      })
      handle.onExit((e) => {
        clearTimeout(timer)
        reject(new Error(`backend probe exited early (code ${e.code}, signal ${e.signal}): ${stderr}`))
      })
      handle.send({ type: 'probe' })
    })
  } finally {
    handle.send({ type: 'shutdown' })
    setTimeout(() => handle.kill('SIGKILL'), 2000).unref()
  }
}
