// One CPU trees group, timed once in a fresh process: 4 models × 50 rounds on 20 000 rows × 50
// features (depth 6, sampling 0.8), after a one-round warm-up. It imports the engine of the checkout
// it is run in (the current directory), so two checkouts compare: run it alternately in each, a few
// times, and take medians (how the per-model fusion of issue 23 was checked not to slow the common
// case). Prints one JSON line: wall ms, CPU ms, the models' tree hashes (equal in both checkouts).
//
//   npx tsx benchmarks/gbdt/per-model-bench.mts                  all four models the same parameters
//   npx tsx benchmarks/gbdt/per-model-bench.mts --grid           four configurations (max depth 4/6 ×
//                                                                lambda 0/1, subsample 0.8/1) fused
//   npx tsx benchmarks/gbdt/per-model-bench.mts --grid --apart   the same four, one model at a time
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

type Engine = typeof import('../../src-main/engine/gbdt/index.ts')
type Synthetic = typeof import('../../src-main/engine/gbdt/synthetic.ts')
const root = pathToFileURL(resolve(process.cwd(), 'src-main/engine/gbdt')).href
const gb = (await import(`${root}/index.ts`)) as Engine
const { syntheticRegression } = (await import(`${root}/synthetic.ts`)) as Synthetic

const args = process.argv.slice(2)
const all = syntheticRegression({ rows: 20_000, features: 50, seed: 3 })
const data = gb.prepareGbdtData(all.x, all.y, all.rows, all.features, 256)
const params = { rounds: 50, maxDepth: 6, eta: 0.1, subsample: 0.8, colsampleBytree: 0.8, maxBin: 256 }
const seeds = [1, 2, 3, 4]
const grid = [
  { maxDepth: 4, lambda: 0 },
  { maxDepth: 6, lambda: 1 },
  { maxDepth: 4, lambda: 1, subsample: 1 },
  { maxDepth: 6, lambda: 0, subsample: 1 },
]

gb.trainGbdtGroup(data, { ...params, rounds: 1 }, seeds)
const cpu0 = process.cpuUsage()
const t0 = performance.now()
const models = !args.includes('--grid')
  ? gb.trainGbdtGroup(data, params, seeds)
  : args.includes('--apart')
    ? grid.map((p, i) => gb.trainGbdt(data, { ...params, ...p }, seeds[i]))
    : gb.trainGbdtGroup(data, params, seeds, { perModel: grid })
const ms = performance.now() - t0
const cpu = process.cpuUsage(cpu0)
console.log(JSON.stringify({ ms: Math.round(ms), cpuMs: Math.round((cpu.user + cpu.system) / 1000), hashes: models.map(gb.treeHash) }))
