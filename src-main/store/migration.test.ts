// Schema v2 migration: a real v1 run.json (written by the store before the model-family seam, kept
// in fixtures/) opens, lists, compares and exports as before; unknown future versions stay damaged.
import { promises as fs } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SCHEMA_VERSION, listEntry, parseRunResult } from '@shared/contract'
import { familyOf } from '@shared/families'
import { exportRun, parseCsv } from '../bench/export'
import { summarize } from '../bench/stats'
import { verify } from '../bench/verify'
import { RunStore } from './run-store'

const V1 = join(__dirname, 'fixtures', 'v1-run.json')
const V1_ID = '20261202-160002-222f26'

let dir: string
beforeEach(async () => {
  dir = await fs.mkdtemp(join(os.tmpdir(), 'trainpool-migrate-'))
  await fs.mkdir(join(dir, V1_ID))
  await fs.copyFile(V1, join(dir, V1_ID, 'run.json'))
})
afterEach(() => fs.rm(dir, { recursive: true, force: true }))

describe('stored v1 runs', () => {
  it('open as v2: the MLP fields move into config.model, trainFlops becomes work, gflops workRate', async () => {
    const raw = JSON.parse(await fs.readFile(V1, 'utf8'))
    expect(raw.schemaVersion).toBe(1)
    const run = await new RunStore(dir).get(V1_ID)
    expect(run.schemaVersion).toBe(SCHEMA_VERSION)
    expect(run.config.model).toEqual({ kind: 'mlp', epochs: raw.config.epochs, batchSize: raw.config.batchSize, hidden: raw.config.hidden, lr: raw.config.lr })
    expect(run.config).not.toHaveProperty('epochs')
    run.measurements.forEach((m, i) => expect(m.work).toBe(raw.measurements[i].trainFlops))
    run.summary.forEach((s, i) => expect(s.workRate).toBe(raw.summary[i].gflops))
    // trainMs meant the group's time under batched: it is groupTrainMs now
    for (const [i, m] of run.measurements.entries()) {
      for (const [k, p] of m.perModel.entries()) {
        const old = raw.measurements[i].perModel[k].trainMs
        const expected = m.strategy === 'batched' ? { trainMs: null, groupTrainMs: old } : { trainMs: old, groupTrainMs: null }
        expect({ trainMs: p.trainMs, groupTrainMs: p.groupTrainMs }).toEqual(expected)
      }
    }
  })

  it('lists, verifies and summarises as it did (same medians, speedups and rates)', async () => {
    const store = new RunStore(dir)
    const [entry] = await store.list()
    expect(entry).toMatchObject({ runId: V1_ID, status: 'ok', preset: 'smoke', backend: 'wasm', sizes: [2000], models: [4] })
    const run = await store.get(V1_ID)
    const again = summarize(run.measurements, familyOf(run.config.model))
    expect(again.map((s) => [s.strategy, s.medianMs, s.speedupVsSequential])).toEqual(run.summary.map((s) => [s.strategy, s.medianMs, s.speedupVsSequential]))
    again.forEach((s, i) => expect(s.workRate).toBeCloseTo(run.summary[i].workRate, 9))
    expect(verify(run.config, run.measurements).sameWork).toBe(true)
  })

  it('exports JSON (as v2, readable again), CSV and Markdown', async () => {
    const run = await new RunStore(dir).get(V1_ID)
    const json = exportRun(run, 'json')
    expect(parseRunResult(JSON.parse(json.content))).toEqual(run)
    const csv = parseCsv(exportRun(run, 'csv').content)
    expect(csv).toHaveLength(1 + run.measurements.length)
    expect(csv[1].slice(0, 3)).toEqual([V1_ID, 'mlp', 'wasm'])
    expect(exportRun(run, 'md').content).toMatch(/sequential/)
  })

  it('an unknown future version is listed as damaged with the reason', async () => {
    const raw = JSON.parse(await fs.readFile(V1, 'utf8'))
    await fs.writeFile(join(dir, V1_ID, 'run.json'), JSON.stringify({ ...raw, schemaVersion: 99 }))
    const [entry] = await new RunStore(dir).list()
    expect(entry.status).toBe('damaged')
    expect(entry.problem).toMatch(/schemaVersion 99 is not supported \(this Trainpool reads 1 to 2\)/)
  })
})

describe('list entries', () => {
  it('name the family and its parameters, and leave sequential (the 1.00× baseline) out of the best speedup', async () => {
    const store = new RunStore(dir)
    const [entry] = await store.list()
    expect(entry.model).toBe('MLP · 100→64→1, Adam lr 0.01, batch 512, 1 epoch')
    const run = await store.get(V1_ID)
    const others = run.summary.filter((s) => s.strategy !== 'sequential').map((s) => s.speedupVsSequential!)
    expect(entry.bestSpeedup).toBe(Math.max(...others))
    run.summary = run.summary.filter((s) => s.strategy === 'sequential')
    expect(listEntry(run).bestSpeedup).toBeNull()
  })
})
