// Successive halving through the whole path (issue 39, part 3): a trees model set with folds and
// --search halving runs sequential, pool and batched on the real worker loop (the in-process
// launcher). Every strategy promotes the same configurations rung by rung (the same-work check says
// so); a survivor is continued, not retrained (the engines' counters of rounds grown add up to the
// rung arithmetic, and its trees are the grid's model of the same configuration trained straight);
// a forced tie is broken by configuration index everywhere; the CLI summary gives the rungs and the
// share of the grid's rounds; bad input is refused naming the field (exit 2 on the CLI).
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BenchConfig, type Measurement, type ModelSet, presetConfig, setSize } from '@shared/contract'
import { summaryTable } from '../cli/bench-command'
import { configFromFlags } from '../cli/options'
import { builtInWorkerFamilies } from '../engine/families'
import { NODE_BIN_PASSES, NODE_ROWS } from '@shared/families/gbdt'
import { RunStore } from '../store/run-store'
import { skipWithoutLibXgboost } from '../testing/capability'
import { InProcessLauncher } from '../testing/in-process-launcher'
import { BenchService } from './bench-service'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trainpool-halving-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

function serviceIn(store?: RunStore): BenchService {
  return new BenchService({
    launcher: new InProcessLauncher(builtInWorkerFamilies),
    store: store ?? null,
    shell: 'cli',
    telemetry: false,
    probe: async () =>
      [
        { name: 'cpu', available: true, detail: 'test cpu' },
        { name: 'webgpu', available: true, gpu: true, detail: 'test webgpu' },
        { name: 'xgboost', available: true, detail: 'test xgboost' },
      ] as never,
  })
}

const ROUNDS = 12

function trees(set: ModelSet, overrides: Partial<BenchConfig> = {}): BenchConfig {
  return presetConfig('smoke', {
    sizes: [600],
    workers: [2],
    backend: 'cpu',
    features: 6,
    strategies: ['sequential', 'pool', 'batched'],
    models: [setSize(set)],
    set,
    search: { method: 'halving', factor: 3, minRounds: 1 },
    model: { kind: 'gbdt', rounds: ROUNDS, maxDepth: 3 } as never,
    ...overrides,
  })
}

async function runOf(config: BenchConfig, store?: RunStore) {
  const service = serviceIn(store)
  const { runId } = await service.start({ config })
  const run = await service.waitForRun(runId)
  await service.shutdown()
  return { run, runId }
}

/** Each strategy's rungs as the configurations live in each. */
const rungsByStrategy = (measurements: readonly Measurement[]) => new Map(measurements.map((m) => [m.strategy, m.rungs?.map((r) => r.configurations)]))

describe('successive halving, every strategy', () => {
  it('promotes the same configurations in sequential, pool and batched, continuing the survivors rather than retraining them', async () => {
    // 6 configurations × 2 folds, subsampled rows and columns (the defaults): rungs 1, 3 and 12 rounds
    const set: ModelSet = { grid: { eta: [0.05, 0.3, 0.6], maxDepth: [2, 4] }, seeds: 1, folds: 2 }
    const store = new RunStore(join(dir, 'runs'))
    const { run, runId } = await runOf(trees(set), store)
    expect(run.status, run.error ?? undefined).toBe('ok')
    expect(run.verification.problems).toEqual([])

    const byStrategy = rungsByStrategy(run.measurements)
    expect([...byStrategy.keys()].sort()).toEqual(['batched', 'pool', 'sequential'])
    const sequential = run.measurements.find((m) => m.strategy === 'sequential')!
    expect(sequential.rungs!.map((r) => [r.rounds, r.configurations.length, r.models])).toEqual([
      [1, 6, 12],
      [3, 2, 4],
      [12, 1, 2],
    ])
    for (const rungs of byStrategy.values()) expect(rungs).toEqual(byStrategy.get('sequential'))
    // each rung records what it ranked: the mean validation MSE of each live configuration, the promoted one the best
    for (const [i, r] of sequential.rungs!.entries()) {
      expect(r.validation.every((v) => v !== null && v > 0)).toBe(true)
      const next = sequential.rungs![i + 1]
      const best = r.configurations[r.validation.indexOf(Math.min(...(r.validation as number[])))]
      if (next) expect(next.configurations).toContain(best)
    }
    // every strategy: each model's last rung, rounds and trees the same
    const models = (m: Measurement) => m.perModel.map((p) => [p.index, p.rung, p.roundsTrained, p.fingerprint])
    for (const m of run.measurements) expect(models(m), m.strategy).toEqual(models(sequential))

    // nothing retrained: the rounds the engines grew add up to the rung arithmetic (12·1 + 4·2 + 2·9),
    // and each model has exactly its last rung's rounds
    const rungs = sequential.rungs!
    const arithmetic = rungs.reduce((n, r, i) => n + r.models * (r.rounds - (i > 0 ? rungs[i - 1].rounds : 0)), 0)
    expect(arithmetic).toBe(38)
    for (const m of run.measurements) {
      expect(
        m.perModel.reduce((n, p) => n + p.roundsTrained!, 0),
        m.strategy,
      ).toBe(arithmetic)
      for (const p of m.perModel) expect(p.roundsTrained).toBe(rungs[p.rung!].rounds)
    }

    // the finalist's models are the grid's models of its configuration trained straight to 12 rounds
    const winner = rungs.at(-1)!.configurations[0]
    const { run: grid } = await runOf(trees(set, { search: undefined, strategies: ['sequential'] }))
    expect(grid.status, grid.error ?? undefined).toBe('ok')
    const straight = new Map(grid.measurements[0].perModel.map((p) => [p.index, p.fingerprint]))
    // the work counted is the rounds trained, not the grid's: a model's work a round and feature is depth × its sampled
    // rows (480 training rows, half of them its fold's) + NODE_BIN_PASSES × its split nodes' max_bin bins (2^depth − 1, at
    // most one for NODE_ROWS sampled rows: families/gbdt.ts workCount); configuration c has depth [2, 4][⌊c/3⌋]
    const { subsample, maxBin } = trees(set).model as { subsample: number; maxBin: number }
    const sampled = Math.ceil(240 * subsample)
    const perRound = (depth: number) => depth * sampled + NODE_BIN_PASSES * Math.min(2 ** depth - 1, Math.ceil(sampled / NODE_ROWS)) * maxBin
    const depthRounds = (rounds: (p: Measurement['perModel'][number]) => number) =>
      sequential.perModel.reduce((n, p) => n + perRound([2, 4][Math.floor(p.configuration! / 3)]) * rounds(p), 0)
    expect(sequential.work / grid.measurements[0].work).toBeCloseTo(depthRounds((p) => p.roundsTrained!) / depthRounds(() => ROUNDS), 12)
    const finalists = sequential.perModel.filter((p) => p.configuration === winner)
    expect(finalists).toHaveLength(2)
    for (const p of finalists) expect(p.fingerprint, `model ${p.index}`).toBe(straight.get(p.index))

    // the kept models are each model's last rung's: a finalist's has every round's trees
    const kept = await store.getModels(runId)
    expect(kept.models).toHaveLength(12)
    for (const { index, artifact } of kept.models)
      if (artifact.format === 'gbdt-trees') expect(artifact.trees, `model ${index}`).toHaveLength(sequential.perModel[index].roundsTrained!)

    expect(summaryTable(run)).toContain(
      "search halving: factor 3 on the validation MSE (2 folds) · rungs 6 configurations × 1 round → 2 × 3 rounds → 1 × 12 rounds · trained 26 % of the grid's rounds (38 of 144, sequential at 600 rows)",
    )
  }, 180_000)

  it('breaks a tie by configuration index in every strategy: two configurations that train the same models', async () => {
    // eta 0.3 and 0.3 + 1e-12 are the same float32 eta, and without sampling the same trees: configurations 1 and 2 tie
    const set: ModelSet = { grid: { eta: [0.02, 0.3, 0.300000000001] }, seeds: 1, folds: 2 }
    const store = new RunStore(join(dir, 'runs'))
    const { run, runId } = await runOf(
      trees(set, { search: { method: 'halving', factor: 3, minRounds: 3 }, model: { kind: 'gbdt', rounds: 9, subsample: 1, colsampleBytree: 1 } as never }),
      store,
    )
    expect(run.status, run.error ?? undefined).toBe('ok')
    expect(run.verification.problems).toEqual([])
    // a first rung of 3 rounds; one of three continues: the first of the tied pair
    for (const rungs of rungsByStrategy(run.measurements).values()) expect(rungs).toEqual([[0, 1, 2], [1]])
    // the tie is real: configuration 2's models (4, 5) at the first rung are configuration 1's (2, 3) first 3 rounds, tree for tree
    const kept = new Map((await store.getModels(runId)).models.map(({ index, artifact }) => [index, artifact]))
    const firstRounds = (i: number) => {
      const a = kept.get(i)!
      return a.format === 'gbdt-trees' ? JSON.stringify(a.trees.slice(0, 3)) : ''
    }
    const four = kept.get(4)!
    expect(four.format === 'gbdt-trees' ? four.trees : []).toHaveLength(3)
    expect([firstRounds(2), firstRounds(3)]).toEqual([firstRounds(4), firstRounds(5)])
  }, 120_000)
})

describe('successive halving on the xgboost backend', () => {
  it('sequential and pool promote the configurations the cpu backend does, continuing each booster: rounds trained the rung arithmetic, the finalist the straight booster', async (ctx) => {
    if (await skipWithoutLibXgboost()) return ctx.skip('no libxgboost')
    // no sampling: the trees of both backends agree, and the in-process launcher's pool workers share one process and XGBoost's one global RNG with it
    const set: ModelSet = { grid: { eta: [0.05, 0.3, 0.6], maxDepth: [2, 4] }, seeds: 1, folds: 2 }
    const config = (backend: 'cpu' | 'xgboost', overrides: Partial<BenchConfig> = {}) =>
      trees(set, {
        backend,
        strategies: ['sequential', 'pool'],
        model: { kind: 'gbdt', rounds: ROUNDS, maxDepth: 3, subsample: 1, colsampleBytree: 1 } as never,
        ...overrides,
      })
    const [{ run: xgboost }, { run: cpu }] = [await runOf(config('xgboost')), await runOf(config('cpu', { strategies: ['sequential'] }))]
    for (const run of [xgboost, cpu]) {
      expect(run.status, run.error ?? undefined).toBe('ok')
      expect(run.verification.problems).toEqual([])
    }
    const sequential = xgboost.measurements.find((m) => m.strategy === 'sequential')!
    const pool = xgboost.measurements.find((m) => m.strategy === 'pool')!
    expect(sequential.rungs!.map((r) => [r.rounds, r.configurations.length, r.models])).toEqual([
      [1, 6, 12],
      [3, 2, 4],
      [12, 1, 2],
    ])
    expect(rungsByStrategy(xgboost.measurements).get('pool')).toEqual(rungsByStrategy(xgboost.measurements).get('sequential'))
    expect(rungsByStrategy(xgboost.measurements).get('sequential')).toEqual(rungsByStrategy(cpu.measurements).get('sequential'))
    const models = (m: Measurement) => m.perModel.map((p) => [p.index, p.rung, p.roundsTrained, p.fingerprint])
    expect(models(pool)).toEqual(models(sequential))

    // nothing retrained: the rounds the boosters were updated add up to the rung arithmetic (12·1 + 4·2 + 2·9)
    const rungs = sequential.rungs!
    for (const m of [sequential, pool]) {
      expect(m.perModel.reduce((n, p) => n + p.roundsTrained!, 0)).toBe(38)
      for (const p of m.perModel) expect(p.roundsTrained).toBe(rungs[p.rung!].rounds)
    }
    // the finalist's boosters are the grid's boosters of its configuration trained straight to 12 rounds
    const { run: grid } = await runOf(config('xgboost', { search: undefined, strategies: ['sequential'] }))
    expect(grid.status, grid.error ?? undefined).toBe('ok')
    const straight = new Map(grid.measurements[0].perModel.map((p) => [p.index, p.fingerprint]))
    const finalists = sequential.perModel.filter((p) => p.configuration === rungs.at(-1)!.configurations[0])
    expect(finalists).toHaveLength(2)
    for (const p of finalists) expect(p.fingerprint, `model ${p.index}`).toBe(straight.get(p.index))
  }, 180_000)
})

describe('successive halving, bad input', () => {
  const refused = async (config: unknown) => {
    const service = serviceIn()
    try {
      await service.validate(config)
      return null
    } catch (err) {
      return err as { code: string; issues?: { field: string; message: string }[] }
    } finally {
      await service.shutdown()
    }
  }
  const set: ModelSet = { grid: { eta: [0.1, 0.3] }, seeds: 1, folds: 2 }

  it('invalid input naming the field: factor 1, a first rung above the rounds, one configuration, no held-out rows, rounds in the grid; every trees backend continues', async () => {
    const cases: [unknown, string, RegExp][] = [
      [trees(set, { search: { method: 'halving', factor: 1 } }), 'search.factor', /factor must be an integer from 2 to 10/],
      [trees(set, { search: { method: 'halving', factor: 3, minRounds: 13 } }), 'search.minRounds', /minRounds 13 is above the model's 12 rounds/],
      [trees({ grid: {}, seeds: 2, folds: 2 }), 'search.method', /this run has 1: accepted: a model set with two or more configurations/],
      [trees({ ...set, folds: null }), 'search.method', /holds none out; accepted: with folds/],
      [trees({ grid: { rounds: [6, 12] }, seeds: 1, folds: 2 }), 'search.method', /rounds cannot be a grid axis/],
    ]
    for (const [config, field, message] of cases) {
      expect(await refused(config)).toMatchObject({ code: 'invalid-input', issues: [{ field, message: expect.stringMatching(message) }] })
    }
    expect(await refused(trees(set))).toBeNull()
    expect(await refused(trees(set, { backend: 'xgboost', strategies: ['sequential', 'pool'] }))).toBeNull()
    expect(await refused(trees(set, { backend: 'webgpu' }))).toBeNull()
  })

  it('the CLI flags make the search, and a bad one is a usage error naming the flag (exit 2)', () => {
    const flags = { model: 'gbdt', preset: 'smoke', backend: 'cpu', eta: '0.1,0.3', folds: '2', rounds: '20' }
    expect(configFromFlags({ ...flags, search: 'halving' } as never).search).toEqual({ method: 'halving', factor: 3 })
    expect(configFromFlags({ ...flags, search: 'halving', factor: '4', minRounds: '2' } as never).search).toEqual({
      method: 'halving',
      factor: 4,
      minRounds: 2,
    })
    expect(configFromFlags(flags as never).search).toBeUndefined()
    expect(() => configFromFlags({ ...flags, search: 'random' } as never)).toThrow('--search "random" is not a search; accepted: grid, halving')
    expect(() => configFromFlags({ ...flags, factor: '3' } as never)).toThrow('--factor applies to --search halving only: add --search halving')
    expect(() => configFromFlags({ ...flags, search: 'halving', factor: '1' } as never)).toThrow('--factor must be an integer from 2 to 10 (got 1)')
    expect(() => configFromFlags({ ...flags, search: 'halving', minRounds: '21' } as never)).toThrow(
      "--min-rounds 21 is above the model's 20 rounds; accepted: 1 to 20 (the last rung ends at the full rounds)",
    )
    expect(() => configFromFlags({ ...flags, eta: '0.1', search: 'halving' } as never)).toThrow(
      /^--search halving ranks configurations and this run has 1: accepted/,
    )
  })
})
