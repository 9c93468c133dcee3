import { EventEmitter, PassThrough } from 'node:stream'
import { describe, expect, it, vi } from 'vitest'
import type { FromWorker, ToWorker } from '@shared/contract'
import { ElectronLauncher, type UtilityChild, type UtilityForkOptions, type UtilityProcessModule } from './electron-launcher'
import type { WorkerExit } from './launcher'

class FakeChild extends EventEmitter implements UtilityChild {
  pid: number | undefined = 4242
  readonly stdout = new PassThrough()
  readonly stderr = new PassThrough()
  readonly posted: unknown[] = []
  kills = 0
  postMessage(message: unknown): void {
    this.posted.push(message)
  }
  kill(): boolean {
    this.kills++
    return true
  }
  /** what Electron does when the process ends */
  die(code: number): void {
    this.pid = undefined
    this.emit('exit', code)
  }
}

function setup() {
  const children: FakeChild[] = []
  const forks: Array<{ path: string; args?: string[]; options?: UtilityForkOptions }> = []
  const utilityProcess: UtilityProcessModule = {
    fork(path, args, options) {
      forks.push({ path, args, options })
      const c = new FakeChild()
      children.push(c)
      return c
    },
  }
  const stdout: string[] = []
  const killProcess = vi.fn<(pid: number, signal: NodeJS.Signals) => void>()
  const launcher = new ElectronLauncher({
    utilityProcess,
    workerPath: '/app/out/main/worker.js',
    onStdout: (chunk, name) => stdout.push(`${name}:${chunk}`),
    killProcess,
  })
  return { launcher, children, forks, stdout, killProcess }
}

const opts = { workerIndex: 2, serviceName: 'trainpool-worker-2', env: { TF_FORCE_GPU_ALLOW_GROWTH: 'true' } }
const ready: FromWorker = { type: 'ready', backend: 'cpu', device: 'cpu', flags: {}, versions: {}, initMs: 1 }

describe('ElectronLauncher', () => {
  it('forks the worker entry as a utility process with pipes, service name and env', () => {
    const { launcher, forks } = setup()
    expect(launcher.kind).toBe('electron')
    launcher.launch(opts)
    expect(forks).toEqual([
      {
        path: '/app/out/main/worker.js',
        args: [],
        options: { serviceName: 'trainpool-worker-2', stdio: 'pipe', env: { TF_FORCE_GPU_ALLOW_GROWTH: 'true' } },
      },
    ])
  })

  it('gives a worker the memory cap (TRAINPOOL_WORKER_MAX_MEMORY_MB) as Node arguments, as the Node launcher does', () => {
    const { launcher, forks } = setup()
    launcher.launch({ ...opts, env: { TRAINPOOL_WORKER_MAX_MEMORY_MB: '512' } })
    expect(forks[0].options?.execArgv).toEqual(['--max-old-space-size=512', '--wasm-max-mem-pages=8192'])
  })

  it('defaults the worker path to worker.js beside the main bundle', () => {
    const launcher = new ElectronLauncher({ utilityProcess: { fork: vi.fn() } })
    expect(launcher.workerPath).toMatch(/[\\/]worker\.js$/)
  })

  it('posts messages to the child and forwards its messages (data, not an event)', () => {
    const { launcher, children } = setup()
    const handle = launcher.launch(opts)
    const got: FromWorker[] = []
    handle.onMessage((m) => got.push(m))
    const msg: ToWorker = { type: 'init', backend: 'cpu', family: 'mlp', workerIndex: 2 }
    handle.send(msg)
    expect(children[0].posted).toEqual([msg])
    children[0].emit('message', ready)
    expect(got).toEqual([ready])
    expect(handle.pid).toBe(4242)
  })

  it('keeps messages and stderr that arrive before a listener is attached', () => {
    const { launcher, children } = setup()
    const handle = launcher.launch(opts)
    children[0].emit('message', ready)
    children[0].stderr.write('early warning\n')
    const got: FromWorker[] = []
    const err: string[] = []
    handle.onMessage((m) => got.push(m))
    handle.onStderr((c) => err.push(c))
    expect(got).toEqual([ready])
    expect(err.join('')).toBe('early warning\n')
  })

  it('forwards stderr as text and drains stdout', () => {
    const { launcher, children, stdout } = setup()
    const handle = launcher.launch(opts)
    const err: string[] = []
    handle.onStderr((c) => err.push(c))
    children[0].stderr.write(Buffer.from('boom\n'))
    children[0].stdout.write('hello\n')
    expect(err).toEqual(['boom\n'])
    expect(stdout).toEqual(['trainpool-worker-2:hello\n'])
  })

  it('reports a fatal V8 error on stderr and the exit code on exit', () => {
    const { launcher, children } = setup()
    const handle = launcher.launch(opts)
    const err: string[] = []
    const exits: WorkerExit[] = []
    handle.onStderr((c) => err.push(c))
    handle.onExit((e) => exits.push(e))
    children[0].emit('error', 'FatalError', 'v8::Heap', 'report')
    children[0].die(134)
    expect(err.join('')).toContain('FatalError at v8::Heap')
    expect(exits).toEqual([{ code: 134, signal: null }])
    expect(handle.pid).toBeUndefined()
    // after exit: sends are dropped, late exit listeners still hear about it
    handle.send({ type: 'shutdown' })
    expect(children[0].posted).toEqual([])
    const late: WorkerExit[] = []
    handle.onExit((e) => late.push(e))
    expect(late).toEqual([{ code: 134, signal: null }])
  })

  it('SIGTERM uses child.kill(); SIGKILL uses process.kill(pid, SIGKILL)', () => {
    const { launcher, children, killProcess } = setup()
    const a = launcher.launch(opts)
    a.kill('SIGTERM')
    expect(children[0].kills).toBe(1)
    expect(killProcess).not.toHaveBeenCalled()

    const b = launcher.launch(opts)
    b.kill('SIGKILL')
    expect(killProcess).toHaveBeenCalledWith(4242, 'SIGKILL')
    expect(children[1].kills).toBe(0)
  })

  it.skipIf(process.platform === 'win32')('names the signal it sent, since Electron reports kills as code 0', () => {
    const { launcher, children } = setup()
    const handle = launcher.launch(opts)
    const exits: WorkerExit[] = []
    handle.onExit((e) => exits.push(e))
    handle.kill('SIGKILL')
    children[0].die(0)
    expect(exits).toEqual([{ code: null, signal: 'SIGKILL' }])
  })

  it('a clean exit nobody asked for stays code 0 with no signal', () => {
    const { launcher, children } = setup()
    const handle = launcher.launch(opts)
    const exits: WorkerExit[] = []
    handle.onExit((e) => exits.push(e))
    children[0].die(0)
    expect(exits).toEqual([{ code: 0, signal: null }])
  })

  it('ignores ESRCH when the process is already gone', () => {
    const { launcher, killProcess } = setup()
    killProcess.mockImplementation(() => {
      throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' })
    })
    const handle = launcher.launch(opts)
    expect(() => handle.kill('SIGKILL')).not.toThrow()
  })
})
