// Early stopping's cost per round in a fused trees program (issue 39): 50 models batched on the CPU
// engine, half of them (eta 0.9, which overfit at once) stopped early by a patience of 2, the other
// half (eta 0.02) live to the end; each round's wall time with the count of models that grew in it
// (onRound), so a round with half the models live is compared with a round of them all in one run.
//   npx tsx benchmarks/gbdt/early-stop-round.mts [--rows 10000] [--features 100] [--rounds 40]
import { loadavg } from 'node:os'
import { DEFAULT_CONFIG } from '../../src-shared/contract/config.ts'
import { generateDataset } from '../../src-main/engine/datasets/generated.ts'
import { prepareGbdtData, trainGbdtGroup } from '../../src-main/engine/gbdt/index.ts'

const args = process.argv.slice(2)
const arg = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt
}
const rows = Number(arg('rows', '10000'))
const features = Number(arg('features', '100'))
const rounds = Number(arg('rounds', '40'))
const models = 50
const data = generateDataset({ size: rows, features, seed: DEFAULT_CONFIG.seed, target: DEFAULT_CONFIG.target, testSplit: DEFAULT_CONFIG.testSplit })
const binned = prepareGbdtData(data.xTrain, data.yTrain, data.train, features, 256)
const validation = { begin: data.train - Math.ceil(0.2 * data.train), end: data.train }
const seeds = Array.from({ length: models }, (_, i) => i + 1)
const perModel = seeds.map((_, i) => ({ eta: i % 2 === 0 ? 0.9 : 0.02 }))
const times: { live: number; ms: number }[] = []
let last = performance.now()
trainGbdtGroup(binned, { rounds, maxDepth: 6, subsample: 1, colsampleBytree: 1 }, seeds, {
  perModel,
  heldOut: seeds.map(() => validation),
  earlyStopping: { rounds: 2, metric: 'mse' },
  onRound: (_round, _rounds, positions) => {
    const now = performance.now()
    times.push({ live: positions.length, ms: now - last })
    last = now
  },
})
const median = (a: number[]) => {
  const s = a.slice().sort((x, y) => x - y)
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const full = times.filter((t) => t.live === models).map((t) => t.ms)
const half = times.filter((t) => t.live === models / 2).map((t) => t.ms)
console.log(`rounds by live models: ${[...new Set(times.map((t) => t.live))].map((n) => `${n}: ${times.filter((t) => t.live === n).length}`).join(', ')}`)
console.log(
  `${rows} rows × ${features} features, ${models} models batched: a round of all ${models} ${median(full).toFixed(1)} ms (median of ${full.length}), with half stopped ${median(half).toFixed(1)} ms (median of ${half.length}) → ${(median(half) / median(full)).toFixed(2)}× (target ≤ 0.6×); load ${loadavg()[0].toFixed(1)}`,
)
