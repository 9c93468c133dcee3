// Workers that dial back (issue 24, part 2), end to end on this machine: real worker processes
// started by the process engine connect to a real gateway on loopback and train what a local pool
// trains (the same models, the same trees); the gateway refuses unknown and replayed tokens, a
// first frame that is not a hello, frames outside the contract and frames over the size limit, each
// logged; the user's data set travels by sha256 over the socket when the worker's machine does not
// share the store; a killed remote worker is a worker failure named by its engine.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { type BenchConfig, type DataSource, presetConfig, WORKER_SOCKET } from '@shared/contract'
import { BenchRunner } from '../../bench/runner'
import { verify } from '../../bench/verify'
import { loadDataFile, resolveDataSource, tablePath } from '../../data'
import { BUILD_OUT, skipWithoutBuild } from '../../testing/capability'
import { NodeLauncher } from '../node-launcher'
import { WorkerPool } from '../worker-pool'
import { WorkerGateway } from './gateway'
import { ProcessScheduler } from './process-scheduler'
import { RemoteLauncher } from './remote-launcher'
import { newRunSecret, workerToken } from './token'

const log: string[] = []
let gateway: WorkerGateway
const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-remote-'))
beforeAll(async () => {
  gateway = await WorkerGateway.listen({ host: '127.0.0.1', port: 0 }, newRunSecret(), (line) => log.push(line))
})
afterAll(async () => {
  await gateway.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Opens a raw socket, sends `frames` in order, and resolves with how the gateway closed it and what it sent. */
function dial(frames: (object | string)[]): Promise<{ code: number; reason: string; received: unknown[] }> {
  return new Promise((resolve) => {
    const socket = new WebSocket(gateway.url)
    const received: unknown[] = []
    socket.on('open', () => frames.forEach((f) => socket.send(typeof f === 'string' ? f : JSON.stringify(f))))
    socket.on('message', (data) => received.push(JSON.parse(data.toString())))
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString(), received }))
    socket.on('error', () => {})
  })
}

const hello = (worker: number, submission: number, token: string) => ({ type: 'hello', worker, submission, token, host: 'test-host', pid: 4242 })

describe('workers that dial back', () => {
  for (const [label, config] of [
    ['mlp on wasm', presetConfig('smoke', { backend: 'wasm', workers: [2], models: [4] })],
    ['trees on cpu', { ...presetConfig('smoke', { backend: 'cpu', workers: [2], models: [4], model: { kind: 'gbdt' } }), sizes: [400] }],
  ] as [string, BenchConfig][]) {
    it(`${label}: every strategy trains what a local pool trains; hosts and queue wait recorded; no process left`, async () => {
      const engine = new ProcessScheduler()
      const remote = await new BenchRunner(new RemoteLauncher(gateway, engine), config).run()
      expect(remote.error).toBeNull()
      expect(remote.status).toBe('ok')
      const local = await new BenchRunner(new NodeLauncher(), config).run()
      expect(local.status).toBe('ok')
      expect(verify(config, remote.measurements).sameWork).toBe(true)
      for (const m of remote.measurements) {
        const twin = local.measurements.find((l) => l.strategy === m.strategy && l.workers === m.workers && l.size === m.size)!
        expect(m.perModel.map((p) => p.index)).toEqual(twin.perModel.map((p) => p.index))
        m.perModel.forEach((p, i) => {
          expect(p.fingerprint).toBe(twin.perModel[i].fingerprint)
          expect(Math.abs(p.testMse - twin.perModel[i].testMse) / twin.perModel[i].testMse).toBeLessThan(1e-4)
        })
        expect(m.workerHosts).toEqual(Array.from({ length: m.strategy === 'sequential' ? 1 : 2 }, () => os.hostname()))
        expect(m.queueMs).toBeGreaterThanOrEqual(0)
      }
      expect(remote.environment?.backend).toBe(config.backend)
      expect(engine.livePids).toEqual([])
    })
  }

  it.skipIf(skipWithoutBuild())("the built CLI's `trainpool worker --connect URL` is such a worker (its token from the environment only)", async () => {
    const engine = new ProcessScheduler()
    const cli = join(BUILD_OUT, 'main', 'cli.js')
    const config = presetConfig('smoke', { backend: 'wasm', workers: [2], models: [4] })
    const launcher = new RemoteLauncher(gateway, engine, { command: (url) => [process.execPath, cli, 'worker', '--connect', url] })
    const outcome = await new BenchRunner(launcher, { ...config, strategies: ['pool'] }).run()
    expect(outcome.error).toBeNull()
    expect(outcome.measurements[0].workerHosts).toEqual([os.hostname(), os.hostname()])
    expect(engine.livePids).toEqual([])
  })

  it('refuses an unknown token, a replayed token and a first frame that is not a hello, and logs each', async () => {
    const good = workerToken(gateway.secret, 9, 0)
    const { connected, stopWaiting } = gateway.expect(9, 0)
    const stranger = await dial([hello(9, 0, workerToken(newRunSecret(), 9, 0))])
    expect(stranger.code).toBe(WORKER_SOCKET.refusedCode)
    expect(log.at(-1)).toMatch(/refused .*unknown token for worker 9 submission 0/)
    const notHello = await dial([{ type: 'job', jobId: 1 }])
    expect(notHello.code).toBe(WORKER_SOCKET.refusedCode)
    expect(log.at(-1)).toMatch(/first frame is not a valid hello/)
    const notExpected = await dial([hello(10, 0, workerToken(gateway.secret, 10, 0))])
    expect(notExpected.code).toBe(WORKER_SOCKET.refusedCode)
    expect(log.at(-1)).toMatch(/worker 10 submission 0 is not expected/)

    // the right worker is welcomed once; the same token again is a replay
    const socket = new WebSocket(gateway.url)
    const welcomed = new Promise<unknown>((resolve) => socket.once('message', (d) => resolve(JSON.parse(d.toString()))))
    socket.on('open', () => socket.send(JSON.stringify(hello(9, 0, good))))
    expect(await welcomed).toEqual({ type: 'welcome' })
    const connection = await connected
    expect(connection.hello).toMatchObject({ worker: 9, host: 'test-host' })
    const replay = await dial([hello(9, 0, good)])
    expect(replay.code).toBe(WORKER_SOCKET.refusedCode)
    expect(log.at(-1)).toMatch(/replayed token for worker 9/)

    // welcomed, then a frame outside the contract: closed and logged, and the connection says why
    const why = new Promise<string>((resolve) => connection.onClose(resolve))
    socket.send(JSON.stringify({ type: 'model-done', jobId: 1, model: { index: -3 } }))
    expect(await why).toMatch(/outside the contract/)
    expect(log.at(-1)).toMatch(/worker 9 sent a frame outside the contract/)
    stopWaiting()
  })

  it('closes a welcomed worker that sends a frame over the size limit, and a worker may fetch only the tables it was given', async () => {
    const { connected } = gateway.expect(11, 0)
    const socket = new WebSocket(gateway.url)
    const frames: unknown[] = []
    socket.on('message', (d) => frames.push(JSON.parse(d.toString())))
    socket.on('open', () => socket.send(JSON.stringify(hello(11, 0, workerToken(gateway.secret, 11, 0)))))
    const connection = await connected
    socket.send(JSON.stringify({ type: 'fetch-table', sha256: 'a'.repeat(64), offset: 0 }))
    await expect.poll(() => frames.at(-1)).toMatchObject({ type: 'table-missing', reason: /not given that data set/ })
    const why = new Promise<string>((resolve) => connection.onClose(resolve))
    socket.send('x'.repeat(WORKER_SOCKET.maxFrameBytes + 1))
    expect(await why).toMatch(/larger than/)
  })

  it('a worker whose machine does not share the store fetches the data set by its sha256 and trains the same trees', async () => {
    const lines = ['a,b,y']
    for (let i = 0; i < 300; i++) lines.push(`${(i * 37) % 101},${(i * 53) % 89},${((i * 37) % 101) * 2 - ((i * 53) % 89)}`)
    writeFileSync(join(dir, 'train.csv'), lines.join('\n'))
    const storeDir = join(dir, 'store')
    const info = await loadDataFile(join(dir, 'train.csv'), storeDir)
    const base = presetConfig('smoke', { backend: 'cpu', workers: [2], models: [3], model: { kind: 'gbdt' } })
    const source: DataSource = { sha256: info.sha256, name: info.name, target: 'y', features: null, exclude: [], impute: 'none' }
    const resolved = await resolveDataSource(storeDir, { ...base, sizes: [250], data: source } as BenchConfig & { data: DataSource })
    const cache = join(dir, 'worker-cache')
    const engine = new ProcessScheduler(() => ({ TRAINPOOL_WORKER_DATA: 'fetch', TRAINPOOL_WORKER_CACHE: cache }))
    const remote = await new BenchRunner(new RemoteLauncher(gateway, engine), resolved.config, {}, { data: resolved.workload }).run()
    expect(remote.error).toBeNull()
    const fetched = join(cache, info.sha256, 'table.f32')
    expect(existsSync(fetched)).toBe(true)
    expect(readFileSync(fetched).equals(readFileSync(tablePath(storeDir, info.sha256)))).toBe(true)
    const local = await new BenchRunner(new NodeLauncher(), resolved.config, {}, { data: resolved.workload }).run()
    expect(remote.measurements.flatMap((m) => m.perModel.map((p) => p.fingerprint))).toEqual(
      local.measurements.flatMap((m) => m.perModel.map((p) => p.fingerprint)),
    )
  })

  it("a remote worker killed mid-job is a worker failure in its engine's words; with continue the other worker finishes the rest", async () => {
    const engine = new ProcessScheduler()
    const config = presetConfig('smoke', { backend: 'wasm', workers: [2], model: { epochs: 30 } })
    const pool = new WorkerPool(new RemoteLauncher(gateway, engine), { family: 'mlp', size: 2, backend: 'wasm', failurePolicy: 'continue' })
    await pool.start()
    const { workloadFor } = await import('@shared/contract')
    const workload = workloadFor(config, 2000)
    let killed = false
    const outcomes = await pool.run(
      [0, 1, 2, 3, 4, 5].map((i) => ({ workload, modelIndices: [i], fused: false })),
      {
        onProgress: (worker) => {
          if (worker === 1 && !killed) {
            killed = true
            process.kill(engine.livePids[1], 'SIGKILL')
          }
        },
      },
    )
    await pool.shutdown()
    const failed = outcomes.filter((o) => o.status === 'failed')
    expect(failed).toHaveLength(1)
    expect(failed[0].failure!.reason).toMatch(/killed by SIGKILL/)
    expect(outcomes.filter((o) => o.status === 'done').flatMap((o) => o.models.map((m) => m.index)).length).toBe(5)
    expect(engine.livePids).toEqual([])
  })
})
