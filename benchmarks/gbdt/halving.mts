// Successive halving against the full grid and against scikit-learn (issue 39): the 54-configuration
// trees grid (3 eta × 3 depth × 3 subsample × 2 min-child-weight) × 3 folds, 100 rounds, on
// Trainpool's CPU engine, searched as a grid and by halving (η 3), both with Trainpool's fastest
// strategy on this machine's cores (batched, W = cores); then scikit-learn 1.2's HalvingGridSearchCV
// on HistGradientBoostingRegressor over the same grid, folds and rows (resource='max_iter', factor 3,
// n_jobs = cores; benchmarks/gbdt/halving_peer.py says how the grid maps onto its parameters).
//
//   npx tsx benchmarks/gbdt/halving.mts [--rows 10000] [--rounds 100]
//        [--folds 3] [--factor 3] [--min-rounds r] [--features 100] [--grid GRID.json] [--json FILE]
// (--grid: the full grid's run from an earlier `trainpool bench --json`, read instead of run again;
// the JSON written by --json keeps the grid's run for that.)
//
// What it reports: each search's time (the measurement's wall time, dispatch to last result; with its
// worker start-up and warm-up beside it), the rounds it trained, the configuration it picked and that
// configuration's mean validation MSE in the full grid's run (so both picks are judged on the same
// numbers), and the ratios the issue asks for: halving ÷ grid time (target ≤ 1/3) with the pick within
// 0.5 % of the grid's best, and Trainpool's halving ÷ scikit-learn's time to a result as good (target
// ≤ 0.5). scikit-learn's picks are judged the same way, by their validation MSE in its own full grid
// (min_resources = the rounds: every candidate to the last round, GridSearchCV's work): its halving
// with Trainpool's first rung, then with each longer first rung it can run (⌊rounds / η^k⌋: its rungs
// stop below the rounds), until its pick is within 0.5 % of its grid's best — that search's time is
// its time to a result as good (its grid's, at worst). The same-schedule ratio is printed beside it.
// Trainpool runs through the built CLI (bin/trainpool.js: `npm run build` first); the data is the
// CLI's own generated set (the seed, target and split of a plain `trainpool bench`), written once for
// Python as float32 files. The machine is shared: read the ratios, one run each.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DEFAULT_CONFIG } from '../../src-shared/contract/config.ts'
import { foldRows } from '../../src-shared/contract/model-set.ts'
import type { RunResult } from '../../src-shared/contract/result.ts'
import { leaderboardOf } from '../../src-shared/leaderboard.ts'
import { generateDataset } from '../../src-main/engine/datasets/generated.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const args = process.argv.slice(2)
const arg = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt
}
const rows = Number(arg('rows', '10000'))
const rounds = Number(arg('rounds', '100'))
const folds = Number(arg('folds', '3'))
const factor = Number(arg('factor', '3'))
const features = Number(arg('features', String(DEFAULT_CONFIG.features)))
const jsonOut = arg('json', '')
/** the first rung's rounds; absent: Trainpool's default (contract/halving.ts defaultMinRounds) */
const minRounds = arg('min-rounds', '')
/** a grid run (a `trainpool bench --json` of this grid) to read instead of running the grid again */
const gridJson = arg('grid', '')
const workers = cpus().length
const grid = { eta: [0.05, 0.1, 0.3], maxDepth: [3, 6, 8], subsample: [0.6, 0.8, 1], minChildWeight: [1, 5] }
const log = (s: string) => process.stderr.write(s + '\n')
const dir = mkdtempSync(join(tmpdir(), 'trainpool-halving-'))

/** halving_peer.py's reply */
interface SklearnSearch {
  sklearn: string
  seconds: number
  best: { eta: number; maxDepth: number; minChildWeight: number }
  bestValidationMse: number
  candidates: number[]
  resources: number[]
  fits: number
  /** every candidate of its last rung: with the rounds as its first rung, the full grid's validation MSE of each */
  scores: { eta: number; maxDepth: number; minChildWeight: number; validationMse: number }[]
}

/** One Trainpool search through the CLI: the run it wrote. */
function trainpool(search: 'grid' | 'halving'): RunResult {
  const json = join(dir, `${search}.json`)
  const cli = [
    ...['bench', '--model', 'gbdt', '--backend', 'cpu', '--sizes', String(rows), '--features', String(features)],
    ...['--strategies', 'batched', '--workers', String(workers), '--repeats', '1', '--rounds', String(rounds)],
    ...['--eta', grid.eta.join(','), '--max-depth', grid.maxDepth.join(','), '--subsample', grid.subsample.join(',')],
    ...['--min-child-weight', grid.minChildWeight.join(','), '--folds', String(folds), '--colsample', '1'],
    ...(search === 'halving' ? ['--search', 'halving', '--factor', String(factor), ...(minRounds ? ['--min-rounds', minRounds] : [])] : []),
    ...['--no-save', '--json', json],
  ]
  log(`\n== trainpool ${search}: trainpool ${cli.join(' ')}`)
  const r = spawnSync(process.execPath, [join(root, 'bin/trainpool.js'), ...cli], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] })
  if (r.status !== 0) throw new Error(`trainpool bench (${search}) exited ${r.status}`)
  return JSON.parse(readFileSync(json, 'utf8')) as RunResult
}

/** The configuration a search picked: the grid's best mean validation; halving's best of its last rung. */
function picked(run: RunResult): number {
  const m = run.measurements[0]
  const last = m.rungs?.at(-1)
  if (last) {
    let best = 0
    for (let i = 1; i < last.configurations.length; i++) if ((last.validation[i] ?? Infinity) < (last.validation[best] ?? Infinity)) best = i
    return last.configurations[best]
  }
  return leaderboardOf(run)!.entries[0].configuration
}

try {
  // a run's JSON, or this script's own (which keeps the grid's run)
  const saved = gridJson ? (JSON.parse(readFileSync(gridJson, 'utf8')) as RunResult & { grid?: { run: RunResult } }) : null
  const gridRun = saved ? (saved.grid?.run ?? saved) : trainpool('grid')
  const halvingRun = trainpool('halving')
  // the full grid's mean validation MSE of every configuration: both picks judged on it
  const board = leaderboardOf(gridRun)!
  const gridValue = new Map(board.entries.map((e) => [e.configuration, e.score.mean]))
  const describe = new Map(board.entries.map((e) => [e.configuration, e.label]))
  const [gm, hm] = [gridRun.measurements[0], halvingRun.measurements[0]]
  const gridBest = picked(gridRun)
  const halvingPick = picked(halvingRun)
  const trainedRounds = (run: RunResult) => run.measurements[0].perModel.reduce((a, p) => a + (p.roundsTrained ?? rounds), 0)

  // scikit-learn on the same training rows and folds
  const data = generateDataset({ size: rows, features, seed: DEFAULT_CONFIG.seed, target: DEFAULT_CONFIG.target, testSplit: DEFAULT_CONFIG.testSplit })
  const x = new Float32Array(data.xTrain.buffer, data.xTrain.byteOffset, data.train * features)
  const y = new Float32Array(data.yTrain.buffer, data.yTrain.byteOffset, data.train)
  writeFileSync(join(dir, 'x.f32'), Buffer.from(x.buffer, x.byteOffset, x.byteLength))
  writeFileSync(join(dir, 'y.f32'), Buffer.from(y.buffer, y.byteOffset, y.byteLength))
  const request = {
    x: join(dir, 'x.f32'),
    y: join(dir, 'y.f32'),
    rows: data.train,
    features,
    folds: Array.from({ length: folds }, (_, f) => foldRows(data.train, folds, f)).map((h) => [h.begin, h.end]),
    grid,
    rounds,
    factor,
    jobs: workers,
    maxBin: 256,
    seed: DEFAULT_CONFIG.seed,
  }
  const python = process.env.TRAINPOOL_PYTHON ?? '/usr/bin/python3'
  let pythonStatus: number | null = 0
  /** scikit-learn's search with this first rung (the rounds: its full grid), or null when Python failed */
  const sklearn = (first: number): SklearnSearch | null => {
    log(`\n== scikit-learn HalvingGridSearchCV, first rung ${first} (n_jobs ${workers})`)
    writeFileSync(join(dir, 'request.json'), JSON.stringify({ ...request, minRounds: first }))
    const py = spawnSync(python, [join(root, 'benchmarks/gbdt/halving_peer.py'), join(dir, 'request.json')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    pythonStatus = py.status
    return py.status === 0 ? (JSON.parse(py.stdout.trim().split('\n').pop()!) as SklearnSearch) : null
  }
  const first = hm.rungs![0].rounds
  const skGrid = sklearn(rounds)
  const sameSchedule = skGrid && sklearn(first)
  /** scikit-learn's searches in the order tried, and the first as good as its grid's best (its time to a result as good) */
  const skTries = sameSchedule ? [sameSchedule] : []
  /** a pick's validation MSE in scikit-learn's full grid (its subsample copies are one candidate: the first) */
  const inSkGrid = (r: SklearnSearch) =>
    skGrid!.scores.find((c) => c.eta === r.best.eta && c.maxDepth === r.best.maxDepth && c.minChildWeight === r.best.minChildWeight)!.validationMse
  const asGood = (r: SklearnSearch) => inSkGrid(r) <= skGrid!.bestValidationMse * 1.005
  if (skGrid && sameSchedule && !asGood(sameSchedule)) {
    for (let k = Math.floor(Math.log(rounds / first) / Math.log(factor)); k >= 1; k--) {
      const longer = Math.floor(rounds / factor ** k)
      if (longer <= first) continue
      const r = sklearn(longer)
      if (!r) break
      skTries.push(r)
      if (asGood(r)) break
    }
  }
  const skAsGood = skGrid ? (skTries.find(asGood) ?? skGrid) : null

  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
  const pct = (a: number, b: number) => `${((100 * (a - b)) / b).toFixed(2)} %`
  const lines = [
    `Successive halving (issue 39): ${rows} rows (${data.train} train) × ${features} features, 54 configurations × ${folds} folds, ${rounds} rounds, η ${factor}, batched W=${workers}, load ${loadavg()[0].toFixed(1)}`,
    `grid:    ${s(gm.wallMs)} (+ start-up ${s(gm.startupMs)}, warm-up ${s(gm.warmupMs)}), ${trainedRounds(gridRun)} rounds, best ${describe.get(gridBest)} — validation MSE ${gridValue.get(gridBest)!.toFixed(5)}`,
    `halving: ${s(hm.wallMs)} (+ start-up ${s(hm.startupMs)}, warm-up ${s(hm.warmupMs)}), ${trainedRounds(halvingRun)} rounds (${((100 * trainedRounds(halvingRun)) / trainedRounds(gridRun)).toFixed(0)} %), rungs ${(hm.rungs ?? []).map((r) => `${r.configurations.length}×${r.rounds}`).join(' → ')}, picked ${describe.get(halvingPick)} — its grid validation MSE ${gridValue.get(halvingPick)!.toFixed(5)} (${pct(gridValue.get(halvingPick)!, gridValue.get(gridBest)!)} from the best; target ≤ 0.5 %)`,
    `halving ÷ grid time: ${(hm.wallMs / gm.wallMs).toFixed(2)}× (target ≤ 0.33×)`,
    ...(skGrid && skAsGood
      ? [
          ...[skGrid, ...skTries].map((r) => {
            const what = r === skGrid ? 'its full grid' : `HalvingGridSearchCV, rungs ${r.candidates.map((c, i) => `${c}×${r.resources[i]}`).join(' → ')}`
            const judged =
              r === skGrid
                ? ''
                : `; in its full grid ${inSkGrid(r).toFixed(5)}, ${pct(inSkGrid(r), skGrid.bestValidationMse)} from that grid's best: ${asGood(r) ? 'as good' : 'not as good'}`
            return `scikit-learn ${r.sklearn} ${what}: ${r.seconds.toFixed(2)} s, ${r.fits} fits, picked eta ${r.best.eta} depth ${r.best.maxDepth} min_samples_leaf ${r.best.minChildWeight} — validation MSE ${r.bestValidationMse.toFixed(5)} at its last rung${judged}`
          }),
          `Trainpool halving ÷ scikit-learn's time to a result as good (${skAsGood.seconds.toFixed(2)} s): ${(hm.wallMs / 1000 / skAsGood.seconds).toFixed(2)}× (target ≤ 0.5×; with Trainpool's start-up and warm-up ${((hm.wallMs + hm.startupMs + hm.warmupMs) / 1000 / skAsGood.seconds).toFixed(2)}×); ÷ its halving on the same first rung ${(hm.wallMs / 1000 / sameSchedule!.seconds).toFixed(2)}×`,
        ]
      : [`scikit-learn: not run (${python} exited ${pythonStatus}; apt-get install python3-sklearn)`]),
  ]
  process.stdout.write(lines.join('\n') + '\n')
  if (jsonOut)
    writeFileSync(
      jsonOut,
      JSON.stringify({
        rows,
        rounds,
        folds,
        factor,
        grid: { ms: gm.wallMs, best: gridBest, run: gridRun },
        halving: { ms: hm.wallMs, picked: halvingPick, rungs: hm.rungs },
        sklearn: skGrid ? { grid: skGrid, tries: skTries, asGood: skAsGood } : null,
      }),
    )
} finally {
  rmSync(dir, { recursive: true, force: true })
}
