// Runs on the user's data through the real service, pool and runner (workers run the real message
// loop in-process): trees and the MLP train on the cached table with the same work verified, the
// result records the data set, a refused data choice starts nothing, and the run needs the cache,
// not the original file; deleteDataSet removes a set (cache entry and uploaded copy) but not while
// the live run trains on it, and past runs keep their record of it.
import { existsSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BenchConfig, type DataSetInfo, type DataSource, presetConfig, TrainpoolError } from '@shared/contract'
import { cacheDir, loadDataFile } from '../data'
import { builtInWorkerFamilies } from '../engine/families'
import { InProcessLauncher } from '../testing/in-process-launcher'
import { RunStore } from '../store/run-store'
import { BenchService } from './bench-service'

const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-user-run-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let info: DataSetInfo
beforeAll(async () => {
  // y depends on a and b; b has missing values; note is text
  const lines = ['a,b,note,y']
  for (let i = 0; i < 300; i++) {
    const a = ((i * 37) % 101) / 10
    const b = ((i * 53) % 89) / 10
    lines.push(`${a},${i % 11 === 0 ? '' : b},${i % 2 ? 'odd' : 'even'},${(2 * a - b + (i % 7) / 10).toFixed(3)}`)
  }
  writeFileSync(join(dir, 'train.csv'), lines.join('\n'))
  info = await loadDataFile(join(dir, 'train.csv'), join(dir, 'store'))
})

function makeService() {
  const launcher = new InProcessLauncher(builtInWorkerFamilies)
  const service = new BenchService({
    launcher,
    store: new RunStore(join(dir, 'store')),
    shell: 'cli',
    telemetry: false,
    probe: async () => [{ name: 'cpu', available: true, detail: 'test cpu' }] as never,
  })
  return { service, launcher }
}

function config(kind: 'gbdt' | 'mlp', data: Partial<DataSource> = {}): BenchConfig {
  const base = presetConfig('smoke', { model: { kind } })
  return {
    ...base,
    sizes: [120, 250],
    models: [3],
    workers: [2],
    backend: 'cpu',
    seed: 5,
    model: kind === 'gbdt' ? { ...base.model, rounds: 40 } : base.model,
    data: { sha256: info.sha256, name: info.name, target: 'y', features: null, exclude: [], impute: 'none', ...data },
  } as BenchConfig
}

describe("a run on the user's data", () => {
  it('trees: every strategy trains the same trees on the cached table; the result records the data set', async () => {
    const { service } = makeService()
    const { runId } = await service.start({ config: config('gbdt') })
    const run = await service.waitForRun(runId)
    expect(run.status).toBe('ok')
    expect(run.verification).toMatchObject({ sameWork: true, problems: [] })
    expect(run.config.features).toBe(2)
    expect(run.dataset).toMatchObject({
      name: 'train.csv',
      sha256: info.sha256,
      rows: 300,
      columns: 4,
      target: 'y',
      features: ['a', 'b'],
      impute: 'none',
      standardised: false,
      sampleSeed: 5,
    })
    for (const size of [120, 250]) {
      const hashes = run.measurements.filter((m) => m.size === size).map((m) => m.perModel.map((p) => p.fingerprint))
      expect(hashes.length).toBe(3)
      for (const h of hashes) expect(h).toEqual(hashes[0])
    }
    // trees learn the target from the file's columns: far better than predicting its mean
    const mse = run.measurements[0].perModel[0].testMse
    expect(mse).toBeLessThan(run.dataset!.targetStats.std ** 2 / 2)
  })

  it('MLP: refused with missing values and nothing started; with impute mean it trains, standardised, same work', async () => {
    const { service, launcher } = makeService()
    const error = await service.start({ config: config('mlp') }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TrainpoolError)
    expect((error as TrainpoolError).issues?.[0]).toMatchObject({ field: 'data.impute' })
    expect(launcher.launched).toBe(0)
    const { runId } = await service.start({ config: config('mlp', { impute: 'mean' }) })
    const run = await service.waitForRun(runId)
    expect(run.status).toBe('ok')
    expect(run.verification.sameWork).toBe(true)
    expect(run.dataset).toMatchObject({ impute: 'mean', imputed: { b: 28 }, standardised: true })
  })

  it('needs the cached table, not the original file: a file removed after loading still trains; a cleared cache is refused at start', async () => {
    writeFileSync(join(dir, 'copy.csv'), 'a,y\n' + Array.from({ length: 200 }, (_, i) => `${i % 17},${i % 5}`).join('\n'))
    const copy = await loadDataFile(join(dir, 'copy.csv'), join(dir, 'store'))
    unlinkSync(join(dir, 'copy.csv'))
    const { service, launcher } = makeService()
    const c = { ...config('gbdt', { sha256: copy.sha256, name: copy.name }), sizes: [150], strategies: ['sequential'] } as BenchConfig
    const run = await service.waitForRun((await service.start({ config: c })).runId)
    expect(run.status).toBe('ok')
    rmSync(cacheDir(join(dir, 'store'), copy.sha256), { recursive: true })
    const before = launcher.launched
    await expect(service.start({ config: c })).rejects.toMatchObject({
      code: 'not-found',
      message: expect.stringMatching(/copy\.csv .* is not in the data cache/),
    })
    expect(launcher.launched).toBe(before)
  })

  it('deleteDataSet: refused while the live run trains on it; then the cache entry and its upload go, past runs keep their record', async () => {
    writeFileSync(join(dir, 'gone.csv'), 'a,y\n' + Array.from({ length: 200 }, (_, i) => `${i % 13},${i % 7}`).join('\n'))
    const store = join(dir, 'store')
    const gone = await loadDataFile(join(dir, 'gone.csv'), store)
    const upload = join(store, '.uploads', gone.sha256)
    mkdirSync(upload, { recursive: true })
    writeFileSync(join(upload, 'gone.csv'), 'a,y\n1,2\n')
    const { service } = makeService()
    const c = { ...config('gbdt', { sha256: gone.sha256, name: gone.name }), sizes: [150], strategies: ['sequential'] } as BenchConfig
    const { runId } = await service.start({ config: c })
    await expect(service.deleteDataSet({ sha256: gone.sha256 })).rejects.toMatchObject({
      code: 'busy',
      message: expect.stringMatching(/is training on gone\.csv/),
    })
    const run = await service.waitForRun(runId)
    expect(run.status).toBe('ok')
    expect((await service.dataSets()).map((d) => d.sha256)).toContain(gone.sha256)

    expect(await service.deleteDataSet({ sha256: gone.sha256 })).toEqual({ deleted: true })
    expect((await service.dataSets()).map((d) => d.sha256)).not.toContain(gone.sha256)
    expect(existsSync(cacheDir(store, gone.sha256))).toBe(false)
    expect(existsSync(upload)).toBe(false)
    expect((await service.dataSets()).map((d) => d.sha256)).toContain(info.sha256) // the others stay
    expect((await service.getRun({ runId })).dataset).toMatchObject({ name: 'gone.csv', sha256: gone.sha256 })
    await expect(service.deleteDataSet({ sha256: gone.sha256 })).rejects.toMatchObject({ code: 'not-found' })
    await expect(service.start({ config: c })).rejects.toMatchObject({ code: 'not-found' })
  })
})
