// Real XGBoost 1.7 (hist, nthread=1) training a trees model set's configurations on the data the
// Trainpool run trained on (the same generated data set: seed, size, features), one booster per
// model with that model's own parameters — the peer of `trainpool bench --model gbdt --eta … --max-depth … --seeds …`.
//
//   npx tsx benchmarks/gbdt/set-reference.mts --config RUN.json
//
// Prints one JSON line: { xgboost, models, wallSeconds (total), perModelSeconds, meanMse }.
import { readFileSync } from 'node:fs'
import { configurationParams, setMember, setSize } from '../../src-shared/contract/model-set.ts'
import { workloadFor } from '../../src-shared/contract/workload.ts'
import { gbdtFamily, type GbdtParams } from '../../src-shared/families/gbdt.ts'
import { datasetFor } from '../../src-main/engine/datasets/generated.ts'
import { runXgboost, xgboostVersion } from '../../src-main/engine/gbdt/xgb-reference.ts'

const args = process.argv.slice(2)
const run = JSON.parse(readFileSync(args[args.indexOf('--config') + 1], 'utf8'))
const config = run.config
const version = xgboostVersion()
if (!version) {
  process.stdout.write(JSON.stringify({ error: 'python3 cannot import xgboost (apt-get install python3-xgboost)' }) + '\n')
  process.exit(0)
}
const size = Math.max(...config.sizes)
const data = datasetFor(workloadFor(config, size))
const F = data.spec.features
const n = setSize(config.set)
const specs = Array.from({ length: n }, (_, i) => {
  const p = configurationParams(gbdtFamily, config.model as GbdtParams, config.set, setMember(config.set, i).configuration)
  return {
    rounds: p.rounds,
    maxDepth: p.maxDepth,
    eta: p.eta,
    lambda: p.lambda,
    alpha: p.alpha,
    gamma: p.gamma,
    minChildWeight: p.minChildWeight,
    maxBin: p.maxBin,
    subsample: p.subsample,
    colsampleBytree: p.colsampleBytree,
    baseScore: p.baseScore,
    seed: config.seed + i + 1,
  }
})
const r = runXgboost(
  { rows: data.train, features: F, x: data.xTrain, y: data.yTrain },
  { rows: data.test, features: F, x: data.xTest, y: data.yTest },
  specs,
  'none',
)
const wall = r.models.reduce((a, m) => a + m.seconds, 0)
process.stdout.write(
  JSON.stringify({ xgboost: r.xgboost, models: n, wallSeconds: wall, perModelSeconds: wall / n, meanMse: r.models.reduce((a, m) => a + m.mse, 0) / n }) + '\n',
)
