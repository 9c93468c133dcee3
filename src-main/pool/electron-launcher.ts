// WorkerLauncher for the desktop app: each worker is an Electron utility process
// (utilityProcess.fork), a plain Node environment that may load native addons, running the same
// worker entry as the Node launcher over process.parentPort. It absorbs Electron's differences:
// `utilityProcess` injected, messages as data, an exit that reports only a code (a signal kill
// looks like code 0), kill() being SIGTERM only. The details: README.md, "Launchers".
import { join } from 'node:path'
import type { FromWorker, ToWorker } from '@shared/contract'
import type { LaunchOptions, WorkerExit, WorkerHandle, WorkerLauncher } from './launcher'
import { memoryCapArgs } from './node-launcher'

/** The part of Electron's UtilityProcess instance this launcher uses. */
export interface UtilityChild {
  readonly pid: number | undefined
  readonly stdout: NodeJS.ReadableStream | null
  readonly stderr: NodeJS.ReadableStream | null
  postMessage(message: unknown): void
  kill(): boolean
  on(event: 'message', listener: (message: unknown) => void): unknown
  on(event: 'exit', listener: (code: number) => void): unknown
  on(event: 'error', listener: (type: 'FatalError', location: string, report: string) => void): unknown
}

export interface UtilityForkOptions {
  serviceName?: string
  /** arguments to the utility process's Node (Electron's `execArgv`): the memory cap's */
  execArgv?: string[]
  stdio?: 'pipe' | 'ignore' | 'inherit' | Array<'pipe' | 'ignore' | 'inherit'>
  env?: Record<string, string>
}

/** The part of Electron's `utilityProcess` module this launcher uses. */
export interface UtilityProcessModule {
  fork(modulePath: string, args?: string[], options?: UtilityForkOptions): UtilityChild
}

export interface ElectronLauncherOptions {
  /** `utilityProcess` from 'electron' (a fake in tests) */
  utilityProcess: UtilityProcessModule
  /** built worker entry; defaults to worker.js next to the main bundle (out/main/worker.js) */
  workerPath?: string
  /** where a worker's stdout goes (it must be drained or the pipe fills up); default: our stdout */
  onStdout?: (chunk: string, serviceName: string) => void
  /** hard-kill function (process.kill); injectable for tests */
  killProcess?: (pid: number, signal: NodeJS.Signals) => void
}

/** out/main/worker.js when called from the bundled main process (out/main/index.js). */
export function defaultWorkerPath(): string {
  return join(__dirname, 'worker.js')
}

export class ElectronLauncher implements WorkerLauncher {
  readonly kind = 'electron' as const
  readonly workerPath: string
  private readonly utilityProcess: UtilityProcessModule
  private readonly onStdout: (chunk: string, serviceName: string) => void
  private readonly killProcess: (pid: number, signal: NodeJS.Signals) => void

  constructor(options: ElectronLauncherOptions) {
    this.utilityProcess = options.utilityProcess
    this.workerPath = options.workerPath ?? defaultWorkerPath()
    this.onStdout = options.onStdout ?? ((chunk) => process.stdout.write(chunk))
    this.killProcess = options.killProcess ?? ((pid, signal) => process.kill(pid, signal))
  }

  launch(options: LaunchOptions): WorkerHandle {
    // the memory cap as the Node launcher gives it (README.md, "Worker processes"); not the GC flag
    const execArgv = memoryCapArgs(options.env)
    const child = this.utilityProcess.fork(this.workerPath, [], {
      serviceName: options.serviceName,
      stdio: 'pipe',
      env: options.env,
      ...(execArgv.length > 0 ? { execArgv } : {}),
    })
    return new ElectronWorkerHandle(child, options.serviceName, this.onStdout, this.killProcess)
  }
}

/**
 * Wraps one utility process. Anything the child emits before the pool has attached its listeners
 * (messages, stderr, the exit itself) is kept and delivered to the first listener of that kind.
 */
class ElectronWorkerHandle implements WorkerHandle {
  private messageListeners: Array<(message: FromWorker) => void> = []
  private stderrListeners: Array<(chunk: string) => void> = []
  private exitListeners: Array<(exit: WorkerExit) => void> = []
  private pendingMessages: FromWorker[] = []
  private pendingStderr: string[] = []
  private exit: WorkerExit | null = null
  private killedWith: 'SIGTERM' | 'SIGKILL' | null = null
  /** pid captured at spawn: Electron clears child.pid after exit */
  private lastPid: number | undefined

  constructor(
    private readonly child: UtilityChild,
    private readonly serviceName: string,
    onStdout: (chunk: string, serviceName: string) => void,
    private readonly killProcess: (pid: number, signal: NodeJS.Signals) => void,
  ) {
    child.on('message', (message) => this.emitMessage(message as FromWorker))
    child.on('exit', (code) => this.emitExit(code))
    child.on('error', (type, location, report) => {
      // Fatal V8 error; 'exit' still follows. Surface it where the pool collects diagnostics.
      this.emitStderr(`[${this.serviceName}] ${type} at ${location}\n${report}\n`)
    })
    if (child.stderr) {
      child.stderr.setEncoding?.('utf8')
      child.stderr.on('data', (chunk: string | Buffer) => this.emitStderr(String(chunk)))
    }
    if (child.stdout) {
      child.stdout.setEncoding?.('utf8')
      child.stdout.on('data', (chunk: string | Buffer) => onStdout(String(chunk), serviceName))
    }
  }

  get pid(): number | undefined {
    if (this.exit) return undefined
    const pid = this.child.pid
    if (pid !== undefined) this.lastPid = pid
    return pid
  }

  send(message: ToWorker): void {
    if (this.exit) return // the pool learns about the death through onExit
    this.child.postMessage(message)
  }

  onMessage(listener: (message: FromWorker) => void): void {
    this.messageListeners.push(listener)
    const pending = this.pendingMessages
    this.pendingMessages = []
    for (const m of pending) listener(m)
  }

  onStderr(listener: (chunk: string) => void): void {
    this.stderrListeners.push(listener)
    const pending = this.pendingStderr
    this.pendingStderr = []
    for (const c of pending) listener(c)
  }

  onExit(listener: (exit: WorkerExit) => void): void {
    this.exitListeners.push(listener)
    if (this.exit) listener(this.exit)
  }

  kill(signal: 'SIGTERM' | 'SIGKILL'): void {
    if (this.exit) return
    this.killedWith = signal === 'SIGKILL' || this.killedWith === 'SIGKILL' ? 'SIGKILL' : 'SIGTERM'
    if (signal === 'SIGTERM') {
      this.child.kill()
      return
    }
    const pid = this.pid ?? this.lastPid
    if (pid === undefined) {
      this.child.kill() // not spawned yet: the best we can do
      return
    }
    try {
      this.killProcess(pid, 'SIGKILL')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err // ESRCH: already gone
    }
  }

  private emitMessage(message: FromWorker): void {
    if (this.messageListeners.length === 0) {
      this.pendingMessages.push(message)
      return
    }
    for (const l of this.messageListeners) l(message)
  }

  private emitStderr(chunk: string): void {
    if (this.stderrListeners.length === 0) {
      this.pendingStderr.push(chunk)
      return
    }
    for (const l of this.stderrListeners) l(chunk)
  }

  private emitExit(code: number): void {
    if (this.exit) return
    // Electron reports our own SIGTERM/SIGKILL as code 0 on POSIX: name the signal we sent.
    const signal = this.killedWith !== null && code === 0 && process.platform !== 'win32' ? this.killedWith : null
    this.exit = { code: signal ? null : code, signal }
    for (const l of this.exitListeners) l(this.exit)
  }
}
