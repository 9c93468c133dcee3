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
// 0.5 % of the grid's best, and Trainpool's halving ÷ scikit-learn's halving time (target ≤ 0.5).
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
/** the first rung's rounds; absent: Trainpool's default (scikit-learn's 'exhaust') */
const minRounds = arg('min-rounds', '')
/** a grid run (a `trainpool bench --json` of this grid) to read instead of running the grid again */
const gridJson = arg('grid', '')
const workers = cpus().length
const grid = { eta: [0.05, 0.1, 0.3], maxDepth: [3, 6, 8], subsample: [0.6, 0.8, 1], minChildWeight: [1, 5] }
const log = (s: string) => process.stderr.write(s + '\n')
const dir = mkdtempSync(join(tmpdir(), 'trainpool-halving-'))

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
    minRounds: minRounds ? Number(minRounds) : null,
    jobs: workers,
    maxBin: 256,
    seed: DEFAULT_CONFIG.seed,
  }
  writeFileSync(join(dir, 'request.json'), JSON.stringify(request))
  log(`\n== scikit-learn HalvingGridSearchCV (n_jobs ${workers})`)
  const python = process.env.TRAINPOOL_PYTHON ?? '/usr/bin/python3'
  const py = spawnSync(python, [join(root, 'benchmarks/gbdt/halving_peer.py'), join(dir, 'request.json')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const sk = py.status === 0 ? JSON.parse(py.stdout.trim().split('\n').pop()!) : null

  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
  const pct = (a: number, b: number) => `${((100 * (a - b)) / b).toFixed(2)} %`
  const lines = [
    `Successive halving (issue 39): ${rows} rows (${data.train} train) × ${features} features, 54 configurations × ${folds} folds, ${rounds} rounds, η ${factor}, batched W=${workers}, load ${loadavg()[0].toFixed(1)}`,
    `grid:    ${s(gm.wallMs)} (+ start-up ${s(gm.startupMs)}, warm-up ${s(gm.warmupMs)}), ${trainedRounds(gridRun)} rounds, best ${describe.get(gridBest)} — validation MSE ${gridValue.get(gridBest)!.toFixed(5)}`,
    `halving: ${s(hm.wallMs)} (+ start-up ${s(hm.startupMs)}, warm-up ${s(hm.warmupMs)}), ${trainedRounds(halvingRun)} rounds (${((100 * trainedRounds(halvingRun)) / trainedRounds(gridRun)).toFixed(0)} %), rungs ${(hm.rungs ?? []).map((r) => `${r.configurations.length}×${r.rounds}`).join(' → ')}, picked ${describe.get(halvingPick)} — its grid validation MSE ${gridValue.get(halvingPick)!.toFixed(5)} (${pct(gridValue.get(halvingPick)!, gridValue.get(gridBest)!)} from the best; target ≤ 0.5 %)`,
    `halving ÷ grid time: ${(hm.wallMs / gm.wallMs).toFixed(2)}× (target ≤ 0.33×)`,
    sk
      ? `scikit-learn ${sk.sklearn} HalvingGridSearchCV: ${sk.seconds.toFixed(2)} s, rungs ${sk.candidates.map((c: number, i: number) => `${c}×${sk.resources[i]}`).join(' → ')}, ${sk.fits} fits, picked eta ${sk.best.eta} depth ${sk.best.maxDepth} min_samples_leaf ${sk.best.minChildWeight} (its validation MSE ${sk.bestValidationMse.toFixed(5)}) → Trainpool halving ÷ scikit-learn: ${(hm.wallMs / 1000 / sk.seconds).toFixed(2)}× (target ≤ 0.5×; with Trainpool's start-up and warm-up ${((hm.wallMs + hm.startupMs + hm.warmupMs) / 1000 / sk.seconds).toFixed(2)}×)`
      : `scikit-learn: not run (${python} exited ${py.status}; apt-get install python3-sklearn)`,
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
        sklearn: sk,
      }),
    )
} finally {
  rmSync(dir, { recursive: true, force: true })
}
