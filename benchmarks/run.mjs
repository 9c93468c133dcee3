// `npm run bench`: what Trainpool is for, measured in one run on this machine.
//  1. MLP — the article's shape (100 features, 50 models, 100→64→1, 3 epochs) on wasm: sequential vs
//     pool (W = 1..cores) vs batched (W = 1 and cores), medians of 3 repeats, training GFLOP/s next
//     to the backend's own large-GEMM GFLOP/s measured in the same run; a small webgpu pass (the WGSL
//     engine, its GEMM kernel's GFLOP/s and its device counters; on lavapipe not a speed claim); peak RSS.
//     The same shape on onnxruntime (native CPU, 1 thread per worker) beside wasm and PyTorch CPU
//     (1 thread: a loop, and all models stacked), when /usr/bin/python3 has torch.
//  2. Trees — the article's own workload (50 XGBoost-style models, depth 6, eta 0.1, 100 rounds,
//     subsample/colsample 0.8) on Trainpool's TypeScript engine: sequential, pool W=1..cores, batched
//     W=1..cores, next to real XGBoost 1.7 (one thread, per model, same shape) timed in the same run;
//     peak RSS per worker at 200 000 rows with 50 models batched. Then the peers: the CPU engine against
//     XGBoost 1.7 (hist) and scikit-learn's HistGradientBoostingRegressor, one model each, 1 thread, no
//     sampling, same data, alternating per repeat, as ratios (benchmarks/gbdt/peers.mts). Then successive
//     halving: a 54-configuration grid × 3 folds by halving against the full grid and scikit-learn's
//     HalvingGridSearchCV on both cores (benchmarks/gbdt/halving.mts).
//  3. Trees on webgpu (Trainpool's WGSL engine) beside the CPU engine at a small shape, sequential
//     and batched W=1, the same tree hashes required: on lavapipe this shows the dispatch works and
//     at what cost (a CPU emulating a GPU: not a speed claim).
//  4. Model sets — a learning-rate grid (5 lrs × 10 seeds) batched against one learning rate, on
//     onnxruntime and wasm, beside PyTorch (1 thread: a loop, and a stacked program with a per-model
//     learning-rate vector); mixed shapes (hidden 32/64/128 × seeds) batched vs sequential; trees 3 eta
//     × 3 depths × 5 seeds batched vs sequential and against XGBoost 1.7 training the same
//     configurations (benchmarks/gbdt/set-reference.mts); 5-fold CV per fold vs a plain run per model.
//  5. Your own data — a generated 200 000 × 101 numeric CSV loaded into the data cache (s, MB/s, peak
//     RSS), loaded again (parse skipped), and training on the cached file vs generated data of the
//     same shape, MLP and trees (benchmarks/data-load.mts).
// Timing is a benchmark, not a test: this machine is shared and noisy, so read the ratios.
// Options (env): BENCH_SIZES (10000,50000), BENCH_BACKEND (wasm), BENCH_REPEATS (3), BENCH_MODELS (50),
// BENCH_WEBGPU_SIZE (2000; 0 skips), BENCH_RSS_SIZE (200000; 0 skips the MLP RSS pass),
// BENCH_GBDT_SIZE (10000; 0 skips the trees), BENCH_GBDT_MODELS (50), BENCH_GBDT_ROUNDS (100),
// BENCH_GBDT_RSS_SIZE (200000; 0 skips), BENCH_MLP (1; 0 skips the MLP passes), BENCH_ESTIMATE (1; 0 skips
// the check of the config panel's time estimate against actual smoke and quick runs),
// BENCH_ORT (1; 0 skips the onnxruntime + PyTorch pass), BENCH_ORT_SIZE (10000),
// BENCH_GBDT_WEBGPU_SIZE (2000; 0 skips the trees on webgpu), BENCH_GBDT_WEBGPU_MODELS (4), BENCH_GBDT_WEBGPU_ROUNDS (10),
// BENCH_ADVICE (1; 0 skips the advice check: benchmarks/advice-check.mts, its own BENCH_ADVICE_* knobs),
// BENCH_DATA (1; 0 skips the data-file pass), BENCH_DATA_ROWS (200000), BENCH_DATA_SIZE (10000: rows trained on),
// BENCH_SET (1; 0 skips the model-set pass), BENCH_SET_SIZE (10000), BENCH_SET_LRS (0.001,0.003,0.01,0.03,0.1),
// BENCH_SET_PAIRS (3: alternating grid / one-learning-rate pairs whose median ratio is reported),
// BENCH_SET_ROUNDS (100: the trees' rounds), BENCH_TREES_PEERS_ROWS (BENCH_GBDT_SIZE, e.g. 10000,50000,200000;
// 0 skips the trees' peers: Trainpool's cpu engine vs XGBoost hist and scikit-learn HGB, benchmarks/gbdt/peers.mts),
// BENCH_TREES_PEERS_REPEATS (3), BENCH_TREES_BINARY_ROWS (BENCH_TREES_PEERS_ROWS; 0 skips: the same peers as
// classifiers, binary:logistic vs HistGradientBoostingClassifier, scored by test log loss),
// BENCH_TREES_MULTICLASS_ROWS (10000; 0 skips: K = 5 multi:softprob), BENCH_ORT_BINARY (1; 0 skips the MLP
// classifier pass: 50 binary MLPs batched on onnxruntime vs the same run as regression and vs PyTorch),
// BENCH_HALVING_ROWS (10000; 0 skips successive halving: the 54-configuration trees grid × 3 folds by halving vs the
// full grid vs scikit-learn's HalvingGridSearchCV, benchmarks/gbdt/halving.mts), BENCH_EARLY_STOP (1; 0 skips a batched
// trees round with half its 50 models stopped early against a full round, benchmarks/gbdt/early-stop-round.mts).
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const outDir = join(root, 'bench-results')
mkdirSync(outDir, { recursive: true })
const cores = os.cpus().length
const env = (name, dflt) => process.env[name] ?? dflt
const backend = env('BENCH_BACKEND', 'wasm')
const sizes = env('BENCH_SIZES', '10000,50000')
const models = env('BENCH_MODELS', '50')
const repeats = env('BENCH_REPEATS', '3')
const webgpuSize = Number(env('BENCH_WEBGPU_SIZE', 2000))
const workerCounts = Array.from({ length: cores }, (_, i) => i + 1).join(',')
const mib = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`
const ratio = (a, b) => (a && b ? `${(a.medianMs / b.medianMs).toFixed(2)}×` : 'n/a')
const secs = (ms) => `${(ms / 1000).toFixed(2)}s`
/** The article's MLP runs (100→64→1, Adam, batch 512, 3 epochs, 100 features) at these sizes, every W. */
const articleMlp = (sizeList, workers = workerCounts) => [
  ...['--sizes', sizeList, '--models', models, '--workers', workers, '--repeats', repeats],
  ...['--epochs', '3', '--hidden', '64', '--batch-size', '512', '--features', '100'],
]

function gemm(b) {
  const out = execFileSync(process.execPath, [join(root, 'benchmarks/gemm-reference.mjs'), b], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  return JSON.parse(out.trim().split('\n').pop())
}

function bench(label, args) {
  const json = join(outDir, `${label}.json`)
  process.stderr.write(`\n== ${label}: trainpool bench ${args.join(' ')}\n`)
  const r = spawnSync(process.execPath, [join(root, 'bin/trainpool.js'), 'bench', ...args, '--no-save', '--json', json], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  if (r.status !== 0) process.stderr.write(`(exit ${r.status})\n`)
  return JSON.parse(readFileSync(json, 'utf8'))
}

/** One table per data size: every strategy and W with its median, spread, ratio and work rate. */
function table(run, extraColumns = () => []) {
  const lines = []
  for (const size of run.config.sizes) {
    const rows = run.summary.filter((s) => s.size === size)
    const seq = rows.find((s) => s.strategy === 'sequential')
    const rate = rows[0] ? Object.keys(rows[0]).includes('workRate') : false
    lines.push(
      `${'strategy'.padEnd(12)} ${'W'.padStart(2)} ${'median'.padStart(9)} ${'min'.padStart(9)} ${'max'.padStart(9)} ${'vs seq'.padStart(8)} ${'per model'.padStart(10)} ${(rate ? 'rate' : '').padStart(10)}${extraColumns(null)}`,
    )
    for (const s of rows) {
      lines.push(
        `${s.strategy.padEnd(12)} ${String(s.workers).padStart(2)} ${secs(s.medianMs).padStart(9)} ${secs(s.minMs).padStart(9)} ${secs(s.maxMs).padStart(9)} ${ratio(seq, s).padStart(8)} ${secs(s.medianMs / s.models).padStart(10)} ${s.workRate.toFixed(2).padStart(10)}${extraColumns(s)}`,
      )
    }
  }
  return lines
}

const get = (run, size, strategy, w) => run.summary.find((s) => s.size === size && s.strategy === strategy && s.workers === w)
const out = {}
let text = ''

if (env('BENCH_MLP', '1') !== '0') {
  const peak = 150 * cores // ≈ float32 FMA peak of this machine (AVX-512, ~150 GFLOP/s per core)
  const mlpReport = (run, reference) => {
    const m = run.config.model
    const lines = [
      `\nMLP on ${run.environment.backend} (${run.environment.device}) — ${run.config.sizes.join('/')} rows × ${run.config.models.join(',')} models, hidden ${m.hidden}, ${m.epochs} epochs, medians of ${run.config.repeats}; rate = GFLOP/s`,
    ]
    lines.push(
      ...table(run, (s) =>
        s
          ? ` ${`${((s.workRate / reference.gflops) * 100).toFixed(0)}%`.padStart(7)} ${`${((s.workRate / peak) * 100).toFixed(1)}%`.padStart(7)}`
          : ` ${'% GEMM'.padStart(7)} ${'% peak'.padStart(7)}`,
      ),
    )
    for (const size of run.config.sizes) {
      const seq = get(run, size, 'sequential', 1)
      lines.push(
        `ratios at ${size}: batched(W=1)/sequential ${ratio(seq, get(run, size, 'batched', 1))}, batched(W=${cores})/sequential ${ratio(seq, get(run, size, 'batched', cores))}, pool W=${cores} vs W=1 ${ratio(get(run, size, 'pool', 1), get(run, size, 'pool', cores))}`,
      )
    }
    lines.push(
      `reference: ${reference.backend} ${reference.n}³ matmul ${reference.gflops.toFixed(1)} GFLOP/s (one process); machine float32 peak ≈ ${peak} GFLOP/s on ${cores} cores`,
    )
    lines.push(
      `same work: ${run.verification.sameWork} (max rel. MSE Δ ${run.verification.maxRelMseDiff.toExponential(1)}, tolerance ${run.verification.tolerance})`,
    )
    // a GPU engine's own account of each measurement: why its device waited, if it did
    for (const m of run.measurements.filter((x) => x.device && x.repeat === 0)) {
      const d = m.device
      lines.push(
        `device work ${m.strategy} W=${m.workers} at ${m.size}: ${d.dispatches} dispatches, ${d.submits} submits, ${d.readbacks} readbacks (${d.bytesReadBack} B), host ${d.hostMsBetweenSubmits.toFixed(1)} ms between submits`,
      )
    }
    for (const w of run.warnings) lines.push(`warning: ${w}`)
    return lines.join('\n')
  }
  const reference = gemm(backend)
  const main = bench(`bench-${backend}`, ['--backend', backend, ...articleMlp(sizes)])
  out.mlp = { reference, summary: main.summary, verification: main.verification, environment: main.environment, status: main.status }
  text += mlpReport(main, reference)
  if (webgpuSize > 0) {
    try {
      const gpuRef = gemm('webgpu')
      const gpu = bench('bench-webgpu', [
        '--backend',
        'webgpu',
        '--sizes',
        String(webgpuSize),
        '--models',
        '16',
        '--workers',
        '1',
        '--repeats',
        '1',
        '--epochs',
        '1',
      ])
      out.webgpu = { reference: gpuRef, summary: gpu.summary, environment: gpu.environment, verification: gpu.verification }
      text += '\n' + mlpReport(gpu, gpuRef)
    } catch (err) {
      text += `\nwebgpu pass skipped: ${err.message.split('\n')[0]}`
    }
  }
  if (env('BENCH_ORT', '1') !== '0') text += '\n' + nativeCpuPass(mlpReport, backend === 'wasm' ? main : null)
  if (env('BENCH_ORT_BINARY', '1') !== '0') text += '\n' + mlpClassifierPass()
  const rssSize = Number(env('BENCH_RSS_SIZE', 200000))
  if (rssSize > 0) {
    // peak RSS per worker at a large size (target ≤ 400 MB): one epoch, one repeat is enough
    const big = bench('bench-rss', [
      '--backend',
      backend,
      '--sizes',
      String(rssSize),
      '--models',
      models,
      '--workers',
      String(cores),
      '--strategies',
      'pool,batched',
      '--repeats',
      '1',
      '--epochs',
      '1',
    ])
    out.rss = big.measurements.map((m) => ({ strategy: m.strategy, workers: m.workers, size: m.size, peakRssBytes: m.peakRssBytes, wallMs: m.wallMs }))
    text += `\n\nMLP peak RSS per worker at ${rssSize} rows (target ≤ 400 MiB): ${big.measurements.map((m) => `${m.strategy} W=${m.workers}: ${m.peakRssBytes.map(mib).join(', ')}`).join('; ')}`
  }
}

/**
 * The native CPU backend (issue 17): the MLP's default shape on onnxruntime (1 thread per worker)
 * beside wasm, and PyTorch CPU with 1 thread (a loop of models, and all stacked in one program) in the
 * same run; Trainpool's best against PyTorch's best, and the targets: best onnxruntime ≤ 1.0× PyTorch's
 * best, batched W=1 training GFLOP/s ≥ 60 % of ORT's own 1024³ GEMM, pool W=2 ≥ 1.7× W=1.
 */
function nativeCpuPass(mlpReport, wasmMain) {
  const size = Number(env('BENCH_ORT_SIZE', 10000))
  const shape = articleMlp(String(size))
  let ortRef
  try {
    ortRef = gemm('onnxruntime')
  } catch (err) {
    return `onnxruntime pass skipped: its GEMM reference failed (${err.message.split('\n')[0]}); see trainpool's capabilities for why`
  }
  const ort = bench('bench-onnxruntime', ['--backend', 'onnxruntime', ...shape])
  const wasm = wasmMain && wasmMain.config.sizes.includes(size) ? wasmMain : bench('bench-wasm-native-shape', ['--backend', 'wasm', ...shape])
  const lines = [mlpReport(ort, ortRef)]
  const torch = pytorch(size)
  out.nativeCpu = {
    reference: ortRef,
    onnxruntime: ort.summary,
    wasm: wasm.summary.filter((s) => s.size === size),
    verification: ort.verification,
    environment: ort.environment,
    pytorch: torch,
  }
  const cell = (s) => (s ? secs(s.medianMs) : 'n/a')
  lines.push(
    `\nSide by side — ${size} rows (${Math.round(size * 0.8)} training) × ${models} models, 100→64→1, Adam, batch 512, 3 epochs, medians of ${repeats}, one run:`,
  )
  lines.push(`${'strategy'.padEnd(22)} ${'onnxruntime'.padStart(12)} ${'wasm'.padStart(10)}`)
  for (const s of ort.summary.filter((x) => x.size === size)) {
    lines.push(`${`${s.strategy} W=${s.workers}`.padEnd(22)} ${cell(s).padStart(12)} ${cell(get(wasm, size, s.strategy, s.workers)).padStart(10)}`)
  }
  const best = (run) => run.summary.filter((s) => s.size === size && s.status !== 'failed').reduce((a, b) => (a && a.medianMs <= b.medianMs ? a : b), null)
  const bestOrt = best(ort)
  const bestWasm = best(wasm)
  if (torch.error) lines.push(`PyTorch: ${torch.error}`)
  else {
    lines.push(`${`PyTorch ${torch.torch} loop`.padEnd(22)} ${secs(torch.loop.medianMs).padStart(12)}   (1 thread, models one after another)`)
    lines.push(`${`PyTorch ${torch.torch} stacked`.padEnd(22)} ${secs(torch.stacked.medianMs).padStart(12)}   (1 thread, all ${models} in one program)`)
    const torchBest = Math.min(torch.loop.medianMs, torch.stacked.medianMs)
    lines.push(
      `Trainpool's best on onnxruntime (${bestOrt.strategy} W=${bestOrt.workers}) ${secs(bestOrt.medianMs)} = ${(bestOrt.medianMs / torchBest).toFixed(2)}× PyTorch's best ${secs(torchBest)} (target ≤ 1.00×); on wasm (${bestWasm.strategy} W=${bestWasm.workers}) ${secs(bestWasm.medianMs)} = ${(bestWasm.medianMs / torchBest).toFixed(2)}×`,
    )
  }
  const b1 = get(ort, size, 'batched', 1)
  if (b1) {
    // on a shared machine the best repeat is the closest to an idle one: both are printed
    const bestRate = (b1.workRate * b1.medianMs) / b1.minMs
    const pct = (rate) => ((rate / ortRef.gflops) * 100).toFixed(0)
    lines.push(
      `batched W=1 on onnxruntime trains at ${b1.workRate.toFixed(1)} GFLOP/s (best repeat ${bestRate.toFixed(1)}) = ${pct(b1.workRate)} % (best ${pct(bestRate)} %) of ORT's own ${ortRef.n}³ GEMM (${ortRef.gflops.toFixed(1)} GFLOP/s, 1 thread, this run; target ≥ 60 %)`,
    )
  }
  lines.push(
    `pool W=2 vs W=1 on onnxruntime: ${ratio(get(ort, size, 'pool', 1), get(ort, size, 'pool', 2))} (target ≥ 1.7×); threads: ${JSON.stringify(ort.environment.backendFlags)}`,
  )
  return lines.join('\n')
}

/**
 * The MLP as a classifier (issue 38): the article's 50 MLPs batched on onnxruntime trained as binary
 * classifiers (generated binary target) and as regressors (the teacher target) in the same run, and
 * PyTorch's binary reference (BCEWithLogitsLoss); targets: binary ≤ 1.2× regression, ≤ 0.6× PyTorch's best.
 */
function mlpClassifierPass() {
  const size = Number(env('BENCH_ORT_SIZE', 10000))
  const shape = articleMlp(String(size), '1,2')
  const only = ['--strategies', 'batched']
  let regression, binary
  try {
    regression = bench('bench-onnxruntime-regression', ['--backend', 'onnxruntime', ...shape, ...only])
    binary = bench('bench-onnxruntime-binary', ['--backend', 'onnxruntime', ...shape, ...only, '--target', 'binary'])
  } catch (err) {
    return `MLP classifier pass skipped: ${err.message.split('\n')[0]}`
  }
  const torch = pytorch(size, 'binary')
  const best = (run) => run.summary.filter((s) => s.size === size).reduce((a, b) => (a && a.medianMs <= b.medianMs ? a : b), null)
  const [r, b] = [best(regression), best(binary)]
  const meanOf = (run, metric) => {
    const m = run.measurements.find((x) => x.size === size && x.status === 'ok')
    const values = (m?.perModel ?? []).map((p) => p.metrics?.[metric]).filter(Number.isFinite)
    return values.length ? values.reduce((s, v) => s + v, 0) / values.length : NaN
  }
  const lines = [
    `\nMLP classifiers — ${size} rows × ${models} models, 100→64→1, batched on onnxruntime, medians of ${repeats}, one run:`,
    `binary (sigmoid, BCE) best ${b.strategy} W=${b.workers} ${secs(b.medianMs)} vs regression (MSE) best ${r.strategy} W=${r.workers} ${secs(r.medianMs)}: ${(b.medianMs / r.medianMs).toFixed(2)}× (target ≤ 1.20×); binary test log loss ${meanOf(binary, 'logloss').toFixed(4)}, accuracy ${meanOf(binary, 'accuracy').toFixed(3)}, ROC AUC ${meanOf(binary, 'auc').toFixed(3)} (mean over the models)`,
  ]
  if (torch.error) lines.push(`PyTorch (binary): ${torch.error}`)
  else {
    const torchBest = Math.min(torch.loop.medianMs, torch.stacked.medianMs)
    lines.push(
      `PyTorch ${torch.torch} binary, 1 thread: loop ${secs(torch.loop.medianMs)}, stacked ${secs(torch.stacked.medianMs)}; Trainpool's binary best ${secs(b.medianMs)} = ${(b.medianMs / torchBest).toFixed(2)}× PyTorch's best (target ≤ 0.60×)`,
    )
  }
  out.mlpClassifier = { regression: regression.summary, binary: binary.summary, verification: binary.verification, pytorch: torch }
  return lines.join('\n')
}

/** benchmarks/gbdt/peers.mts at these rows for an objective: its table's lines and its JSON (null when it failed). */
function treesPeers(rows, rounds, objective, classes) {
  const json = join(outDir, `bench-trees-peers${objective === 'regression' ? '' : `-${objective}`}.json`)
  process.stderr.write(`\n== trees peers (${objective}): ${rows} rows, Trainpool cpu engine vs XGBoost and scikit-learn, 1 thread\n`)
  const args = [
    '--import',
    'tsx',
    join(root, 'benchmarks/gbdt/peers.mts'),
    '--rows',
    rows,
    '--repeats',
    env('BENCH_TREES_PEERS_REPEATS', '3'),
    '--rounds',
    rounds,
  ]
  if (objective !== 'regression') args.push('--objective', objective, ...(classes ? ['--classes', classes] : []))
  const r = spawnSync(process.execPath, [...args, '--json', json], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
  if (r.status !== 0) return { lines: [`trees peers (${objective}, benchmarks/gbdt/peers.mts): exit ${r.status}`], json: null }
  return { lines: r.stdout.trim().split('\n'), json: JSON.parse(readFileSync(json, 'utf8')) }
}

/** benchmarks/gbdt/halving.mts at these rows: its lines and its JSON (null when it failed). */
function treesHalving(rows, rounds) {
  const json = join(outDir, 'bench-trees-halving.json')
  process.stderr.write(`\n== trees halving: ${rows} rows, 54 configurations × 3 folds, grid vs halving vs scikit-learn's HalvingGridSearchCV\n`)
  const args = ['--import', 'tsx', join(root, 'benchmarks/gbdt/halving.mts'), '--rows', rows, '--rounds', rounds, '--json', json]
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
  if (r.status !== 0) return { lines: [`trees halving (benchmarks/gbdt/halving.mts): exit ${r.status}`], json: null }
  return { lines: r.stdout.trim().split('\n'), json: JSON.parse(readFileSync(json, 'utf8')) }
}

/** PyTorch CPU on the same shape (benchmarks/pytorch/mlp.py), when /usr/bin/python3 has torch. */
function pytorch(size, objective = 'regression') {
  const python = '/usr/bin/python3'
  const probe = spawnSync(python, ['-c', 'import torch'], { stdio: 'ignore' })
  if (probe.status !== 0) return { error: `not available (${python} has no torch: apt-get install -y python3-torch)` }
  process.stderr.write(`\n== PyTorch reference (${objective}): ${size} rows × ${models} models, 1 thread, loop and stacked\n`)
  const args = ['--rows', String(size), '--models', models, '--repeats', repeats, '--threads', '1', '--objective', objective]
  const r = spawnSync(python, [join(root, 'benchmarks/pytorch/mlp.py'), ...args], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  if (r.status !== 0) return { error: `benchmarks/pytorch/mlp.py exited ${r.status}` }
  return JSON.parse(r.stdout.trim().split('\n').pop())
}

const gbdtSize = Number(env('BENCH_GBDT_SIZE', 10000))
if (gbdtSize > 0) {
  const gbdtModels = env('BENCH_GBDT_MODELS', '50')
  const rounds = env('BENCH_GBDT_ROUNDS', '100')
  const trees = bench('bench-gbdt', [
    '--model',
    'gbdt',
    '--backend',
    'cpu',
    '--sizes',
    String(gbdtSize),
    '--models',
    gbdtModels,
    '--workers',
    workerCounts,
    '--repeats',
    '1',
    '--rounds',
    rounds,
    '--max-depth',
    '6',
    '--eta',
    '0.1',
    '--features',
    '100',
  ])
  // real XGBoost 1.7, one thread, on the same shape (rows before the 80/20 split, 100 features), same run
  let xgb = null
  try {
    const json = join(outDir, 'bench-gbdt-xgboost.json')
    process.stderr.write(`\n== XGBoost reference: ${gbdtSize} rows, 5 models, nthread=1\n`)
    execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        join(root, 'benchmarks/gbdt/engine-bench.mts'),
        '--rows',
        String(gbdtSize),
        '--models',
        '1',
        '--xgb-models',
        '5',
        '--rounds',
        rounds,
        '--json',
        json,
      ],
      {
        cwd: root,
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    )
    xgb = JSON.parse(readFileSync(json, 'utf8')).xgb
  } catch (err) {
    process.stderr.write(`XGBoost reference failed: ${err.message.split('\n')[0]}\n`)
  }
  const p = trees.config.model
  const lines = [
    `\nTrees (GBDT) on Trainpool's TypeScript engine (${trees.environment.device}) — ${gbdtSize} rows × ${trees.config.models} models, ${p.rounds} rounds, depth ${p.maxDepth}, eta ${p.eta}, subsample ${p.subsample}, colsample ${p.colsampleBytree}; rate = ${'M hist. updates/s'}`,
  ]
  lines.push(...table(trees))
  const seq = get(trees, gbdtSize, 'sequential', 1)
  const perModelSeq = seq ? seq.medianMs / seq.models : NaN
  if (xgb) {
    lines.push(`XGBoost ${xgb.version} hist, nthread=1: ${xgb.wall.toFixed(2)} s per model (wall, 5 models, same shape, this run)`)
    lines.push(
      `Trainpool sequential per model ${(perModelSeq / 1000).toFixed(2)} s = ${(perModelSeq / 1000 / xgb.wall).toFixed(2)}× XGBoost's time (target ≤ 1.00×); best Trainpool per model ${(Math.min(...trees.summary.map((s) => s.medianMs / s.models)) / 1000).toFixed(2)} s = ${(xgb.wall / (Math.min(...trees.summary.map((s) => s.medianMs / s.models)) / 1000)).toFixed(2)}× faster than one XGBoost thread`,
    )
  } else lines.push('XGBoost reference: not available (install python3-xgboost)')
  lines.push(
    `ratios: batched(W=1)/sequential ${ratio(seq, get(trees, gbdtSize, 'batched', 1))} (target ≥ 1.5×), pool W=2 vs W=1 ${ratio(get(trees, gbdtSize, 'pool', 1), get(trees, gbdtSize, 'pool', 2))} (target ≥ 1.7×), batched(W=${cores})/sequential ${ratio(seq, get(trees, gbdtSize, 'batched', cores))}`,
  )
  lines.push(`same work: ${trees.verification.sameWork} (tolerance ${trees.verification.tolerance}; model i's tree hash equal in every strategy)`)
  if (env('BENCH_XGBOOST', '1') !== '0') {
    // the user's real XGBoost through Trainpool's xgboost backend (FFI), one thread per worker: sequential and pools
    const real = spawnSync(
      process.execPath,
      [
        join(root, 'bin/trainpool.js'),
        'bench',
        '--model',
        'gbdt',
        '--backend',
        'xgboost',
        '--sizes',
        String(gbdtSize),
        '--models',
        gbdtModels,
        '--workers',
        workerCounts,
        '--strategies',
        'sequential,pool',
        '--repeats',
        '1',
        '--rounds',
        rounds,
        '--no-save',
        '--json',
        join(outDir, 'bench-xgboost.json'),
      ],
      {
        cwd: root,
        stdio: ['ignore', 'inherit', 'inherit'],
        env: { ...process.env, TRAINPOOL_XGBOOST_NTHREAD: '1' },
      },
    )
    if (real.status === 0) {
      const x = JSON.parse(readFileSync(join(outDir, 'bench-xgboost.json'), 'utf8'))
      out.xgboostBackend = { summary: x.summary, verification: x.verification, environment: x.environment }
      lines.push(`\nXGBoost ${x.environment.versions?.xgboost ?? ''} through Trainpool's xgboost backend (FFI, nthread 1 per worker), same shape, same run:`)
      lines.push(...table(x))
      const xs = get(x, gbdtSize, 'sequential', 1)
      lines.push(
        `side by side (per model): Trainpool engine sequential ${secs(perModelSeq)}, batched W=${cores} ${secs(get(trees, gbdtSize, 'batched', cores)?.medianMs / trees.config.models)}; XGBoost sequential ${secs(xs?.medianMs / x.config.models)}, pool W=${cores} ${secs(get(x, gbdtSize, 'pool', cores)?.medianMs / x.config.models)}; XGBoost pool W=2 vs sequential ${ratio(xs, get(x, gbdtSize, 'pool', 2))} (target ≥ 1.7×)`,
      )
    } else lines.push(`XGBoost backend pass: exit ${real.status} (is libxgboost installed? see trainpool bench --model gbdt --backend xgboost)`)
  }
  const peersRows = env('BENCH_TREES_PEERS_ROWS', String(gbdtSize))
  if (peersRows !== '0') {
    // issue 25: the peers — Trainpool's CPU engine vs XGBoost (hist) and scikit-learn's HistGradientBoostingRegressor,
    // 1 thread, no sampling, same data, per model, alternating per repeat (benchmarks/gbdt/peers.mts + peers.py)
    const peers = treesPeers(peersRows, rounds, 'regression')
    lines.push('', ...peers.lines)
    if (peers.json) out.treesPeers = peers.json
    // issue 38: the same for classifiers — binary:logistic / HistGradientBoostingClassifier at the same sizes, and K = 5 multiclass
    const binaryRows = env('BENCH_TREES_BINARY_ROWS', peersRows)
    if (binaryRows !== '0') {
      const binary = treesPeers(binaryRows, rounds, 'binary')
      lines.push('', ...binary.lines)
      if (binary.json) out.treesPeersBinary = binary.json
    }
    const multiRows = env('BENCH_TREES_MULTICLASS_ROWS', '10000')
    if (multiRows !== '0') {
      const multi = treesPeers(multiRows, rounds, 'multiclass', '5')
      lines.push('', ...multi.lines)
      if (multi.json) out.treesPeersMulticlass = multi.json
    }
  }
  const halvingRows = env('BENCH_HALVING_ROWS', '10000')
  if (halvingRows !== '0') {
    // issue 39: successive halving — the 54-configuration grid × 3 folds searched by halving against the full grid and
    // against scikit-learn's HalvingGridSearchCV, both on both cores (benchmarks/gbdt/halving.mts + halving_peer.py)
    const halving = treesHalving(halvingRows, rounds)
    lines.push('', ...halving.lines)
    if (halving.json) out.treesHalving = halving.json
  }
  if (env('BENCH_EARLY_STOP', '1') !== '0') {
    // issue 39: a fused trees program's round with half its models stopped early against a round of them all (one run)
    process.stderr.write('\n== trees early stopping: a batched round with half the models stopped\n')
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'benchmarks/gbdt/early-stop-round.mts')], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    lines.push(
      '',
      r.status === 0 ? `Early stopping (benchmarks/gbdt/early-stop-round.mts): ${r.stdout.trim().split('\n').pop()}` : `early stopping pass: exit ${r.status}`,
    )
  }
  for (const w of trees.warnings) lines.push(`warning: ${w}`)
  out.gbdt = { summary: trees.summary, verification: trees.verification, environment: trees.environment, xgboost: xgb }
  const gbdtRss = Number(env('BENCH_GBDT_RSS_SIZE', 200000))
  if (gbdtRss > 0) {
    // peak RSS per worker with 50 models batched at 200 000 rows (target ≤ 1 GiB): a few rounds show the peak
    const big = bench('bench-gbdt-rss', [
      '--model',
      'gbdt',
      '--backend',
      'cpu',
      '--sizes',
      String(gbdtRss),
      '--models',
      gbdtModels,
      '--workers',
      '1',
      '--strategies',
      'batched',
      '--repeats',
      '1',
      '--rounds',
      '3',
    ])
    out.gbdtRss = big.measurements.map((m) => ({ strategy: m.strategy, workers: m.workers, size: m.size, peakRssBytes: m.peakRssBytes }))
    lines.push(
      `peak RSS per worker, ${gbdtRss} rows × ${gbdtModels} models batched W=1 (target ≤ 1 GiB): ${big.measurements.map((m) => m.peakRssBytes.map(mib).join(', ')).join('; ')}`,
    )
  }
  text += '\n' + lines.join('\n')
}

const gbdtGpuSize = Number(env('BENCH_GBDT_WEBGPU_SIZE', 2000))
if (gbdtGpuSize > 0) {
  const shape = [
    '--model',
    'gbdt',
    '--sizes',
    String(gbdtGpuSize),
    '--models',
    env('BENCH_GBDT_WEBGPU_MODELS', '4'),
    '--workers',
    '1',
    '--strategies',
    'sequential,batched',
    '--repeats',
    '1',
    '--rounds',
    env('BENCH_GBDT_WEBGPU_ROUNDS', '10'),
  ]
  try {
    const gpu = bench('bench-gbdt-webgpu', ['--backend', 'webgpu', ...shape])
    const cpu = bench('bench-gbdt-webgpu-cpu', ['--backend', 'cpu', ...shape])
    const prints = (run) => JSON.stringify(run.measurements.map((m) => [...m.perModel].sort((a, b) => a.index - b.index).map((p) => p.fingerprint)))
    const p = gpu.config.model
    const lines = [
      `\nTrees on webgpu (${gpu.environment.device}) beside the CPU engine — ${gbdtGpuSize} rows × ${gpu.config.models} models, ${p.rounds} rounds, depth ${p.maxDepth}`,
    ]
    lines.push('webgpu:', ...table(gpu), 'cpu:', ...table(cpu))
    const g = (run, strategy) => get(run, gbdtGpuSize, strategy, 1)
    lines.push(
      `webgpu: batched(W=1)/sequential ${ratio(g(gpu, 'sequential'), g(gpu, 'batched'))}; webgpu's time / the CPU engine's: sequential ${ratio(g(gpu, 'sequential'), g(cpu, 'sequential'))}, batched ${ratio(g(gpu, 'batched'), g(cpu, 'batched'))}`,
    )
    lines.push(`same trees as the CPU engine: ${prints(gpu) === prints(cpu)} (tree hashes of every model in every strategy)`)
    out.gbdtWebgpu = { webgpu: gpu.summary, cpu: cpu.summary, environment: gpu.environment, sameTrees: prints(gpu) === prints(cpu) }
    text += '\n' + lines.join('\n')
  } catch (err) {
    text += `\ntrees on webgpu skipped: ${err.message.split('\n')[0]}`
  }
}

if (env('BENCH_SET', '1') !== '0') {
  // issue 23: model sets — per-model scalars must not break fusion; mixed shapes; trees grids and folds
  const setSize = env('BENCH_SET_SIZE', '10000')
  const lines = ['\nModel sets (issue 23), one run each, ratios from this run:']
  const perModel = (run, strategy) => {
    const s = run.summary.filter((x) => x.strategy === strategy).sort((a, b) => a.medianMs - b.medianMs)[0]
    return s ? { ...s, perModelMs: s.medianMs / s.models } : null
  }
  out.modelSets = {}
  const lrs = env('BENCH_SET_LRS', '0.001,0.003,0.01,0.03,0.1')
  const lrCount = lrs.split(',').length
  const seeds = String(Math.round(Number(models) / lrCount))
  for (const backend of ['onnxruntime', 'wasm']) {
    const common = ['--sizes', setSize, '--workers', workerCounts, '--repeats', repeats, '--backend', backend]
    // the grid and the one-learning-rate run alternate in pairs (ABBA), and the ratio is the median of
    // the pairs' ratios: one run of each drifted by 20 % with the machine's load (the same ORT graph)
    const pairs = Number(env('BENCH_SET_PAIRS', '3'))
    let grid
    const ratios = []
    const singles = []
    try {
      for (let p = 0; p < pairs; p++) {
        const runGrid = () =>
          bench(`bench-set-lr-${backend}-${p}`, [...common, '--lr', lrs, '--seeds', seeds, '--strategies', p === 0 ? 'sequential,batched' : 'batched'])
        const runSingle = () => bench(`bench-set-lr1-${backend}-${p}`, [...common, '--models', String(lrCount * Number(seeds)), '--strategies', 'batched'])
        let g, s
        if (p % 2 === 0) {
          g = runGrid()
          s = runSingle()
        } else {
          s = runSingle()
          g = runGrid()
        }
        if (p === 0) grid = g
        singles.push(s)
        ratios.push(perModel(s, 'batched').medianMs / perModel(g, 'batched').medianMs)
      }
    } catch (err) {
      lines.push(`${backend}: skipped (${err.message.split('\n')[0]})`)
      continue
    }
    const g = perModel(grid, 'batched')
    const s = perModel(singles[0], 'batched')
    const sorted = [...ratios].sort((a, b) => a - b)
    const ratio = sorted[Math.floor(sorted.length / 2)]
    lines.push(
      `MLP ${lrCount} learning rates × ${seeds} seeds on ${backend}: batched ${secs(g.medianMs)} (W=${g.workers}) vs batched with one learning rate ${secs(s.medianMs)} (W=${s.workers}): ${ratio.toFixed(2)}× its speed, the median of ${pairs} alternating pairs (${sorted.map((r) => r.toFixed(2)).join(', ')}; target ≥ 0.90×); sequential ${secs(perModel(grid, 'sequential').medianMs)}; same work: ${grid.verification.sameWork}`,
    )
    out.modelSets[`lr-${backend}`] = { grid: grid.summary, single: singles[0].summary, speedVsSingleLr: ratio, pairRatios: ratios }
  }
  const torch = spawnSync(
    '/usr/bin/python3',
    [
      join(root, 'benchmarks/pytorch/mlp.py'),
      '--rows',
      setSize,
      '--models',
      String(lrCount * Number(seeds)),
      '--lrs',
      lrs,
      '--repeats',
      repeats,
      '--threads',
      '1',
    ],
    { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  )
  if (torch.status === 0) {
    const t = JSON.parse(torch.stdout.trim().split('\n').pop())
    const best = Math.min(t.loop.medianMs, t.stacked.medianMs)
    const ours = Math.min(...['onnxruntime', 'wasm'].flatMap((b) => (out.modelSets[`lr-${b}`]?.grid ?? []).map((x) => x.medianMs)))
    lines.push(
      `PyTorch ${t.torch} (1 thread) on the same grid: loop ${secs(t.loop.medianMs)}, stacked with a per-model learning-rate vector ${secs(t.stacked.medianMs)}; Trainpool's best ${secs(ours)} = ${(ours / best).toFixed(2)}× PyTorch's best (target < 1.00×)`,
    )
    out.modelSets.pytorch = t
  } else lines.push('PyTorch: not available (apt-get install -y python3-torch)')
  for (const backend of ['onnxruntime', 'wasm']) {
    try {
      const mixed = bench(`bench-set-mixed-${backend}`, [
        '--sizes',
        setSize,
        '--workers',
        workerCounts,
        '--repeats',
        repeats,
        '--backend',
        backend,
        '--hidden',
        '32/64/128',
        '--seeds',
        String(Math.round(Number(models) / 3)),
        '--strategies',
        'sequential,batched',
      ])
      const seq = perModel(mixed, 'sequential')
      const bat = perModel(mixed, 'batched')
      lines.push(
        `MLP hidden 32/64/128 × ${Math.round(Number(models) / 3)} seeds on ${backend}: batched ${secs(bat.medianMs)} (W=${bat.workers}) = ${(seq.medianMs / bat.medianMs).toFixed(2)}× sequential's speed (target ≥ 1.30×)`,
      )
      out.modelSets[`mixed-${backend}`] = mixed.summary
    } catch (err) {
      lines.push(`mixed shapes on ${backend}: skipped (${err.message.split('\n')[0]})`)
    }
  }
  const rounds = env('BENCH_SET_ROUNDS', '100')
  const trees = bench('bench-set-trees', [
    '--model',
    'gbdt',
    '--backend',
    'cpu',
    '--sizes',
    setSize,
    '--eta',
    '0.05,0.1,0.3',
    '--max-depth',
    '4,6,8',
    '--seeds',
    '5',
    '--workers',
    workerCounts,
    '--repeats',
    '1',
    '--rounds',
    rounds,
    '--strategies',
    'sequential,batched',
  ])
  const tSeq = perModel(trees, 'sequential')
  const tBat = perModel(trees, 'batched')
  lines.push(
    `Trees 3 eta × 3 depths × 5 seeds (${trees.config.models[0]} models, ${rounds} rounds) on cpu: batched ${secs(tBat.medianMs)} (W=${tBat.workers}) vs sequential ${secs(tSeq.medianMs)}: ${(tSeq.medianMs / tBat.medianMs).toFixed(2)}× (target ≥ 1.00×); per model ${(tSeq.perModelMs / 1000).toFixed(2)} s sequential, ${(Math.min(tSeq.perModelMs, tBat.perModelMs) / 1000).toFixed(2)} s at best`,
  )
  const ref = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(root, 'benchmarks/gbdt/set-reference.mts'), '--config', join(outDir, 'bench-set-trees.json')],
    { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, OMP_NUM_THREADS: '1' } },
  )
  const xgb = ref.status === 0 ? JSON.parse(ref.stdout.trim().split('\n').pop()) : { error: `exit ${ref.status}` }
  if (xgb.error) lines.push(`XGBoost on the same configurations: ${xgb.error}`)
  else
    lines.push(
      `XGBoost ${xgb.xgboost} (hist, 1 thread) on the same ${xgb.models} configurations and data: ${xgb.perModelSeconds.toFixed(2)} s per model; Trainpool sequential per model = ${(tSeq.perModelMs / 1000 / xgb.perModelSeconds).toFixed(2)}× XGBoost's (target ≤ 1.00×)`,
    )
  out.modelSets.trees = { summary: trees.summary, xgboost: xgb }
  // per fold against a plain run's per model, each strategy (batched fuses the folds on the trees engines)
  const folds = bench('bench-set-folds', [
    '--model',
    'gbdt',
    '--backend',
    'cpu',
    '--sizes',
    setSize,
    '--folds',
    '5',
    '--workers',
    '1',
    '--repeats',
    repeats,
    '--rounds',
    rounds,
    '--strategies',
    'sequential,batched',
  ])
  const plain = bench('bench-set-folds-plain', [
    '--model',
    'gbdt',
    '--backend',
    'cpu',
    '--sizes',
    setSize,
    '--models',
    '5',
    '--workers',
    '1',
    '--repeats',
    repeats,
    '--rounds',
    rounds,
    '--strategies',
    'sequential,batched',
  ])
  out.modelSets.folds = {}
  for (const strategy of ['sequential', 'batched']) {
    const f = perModel(folds, strategy)
    const p = perModel(plain, strategy)
    lines.push(
      `Trees 5-fold CV of one configuration, ${strategy}: ${secs(f.perModelMs)} per fold vs ${secs(p.perModelMs)} per model of a plain run = ${(f.perModelMs / p.perModelMs).toFixed(2)}× (target ≤ 1.00×)`,
    )
    out.modelSets.folds[strategy] = { perFoldMs: f.perModelMs, perModelMs: p.perModelMs }
  }
  text += '\n' + lines.join('\n')
}

if (env('BENCH_ESTIMATE', '1') !== '0') {
  // the config panel's estimate against the actual run time, for the smoke and quick presets (target ±30 %)
  process.stderr.write('\n== estimate check: smoke and quick, MLP on wasm and trees on cpu\n')
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'benchmarks/estimate-check.mts')], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines = (r.stdout ?? '').trim().split('\n')
  out.estimate = JSON.parse(lines.pop() || '[]')
  text += `\n\nEstimate before Run vs the actual run (target within ±30 %):\n${lines.join('\n')}`
}

if (env('BENCH_ADVICE', '1') !== '0') {
  // issue 15: a sweep to N = 50 predicts N = 200 for every strategy/W, then N = 200 is measured (target within 15 %)
  process.stderr.write('\n== advice check: sweep to 50 models, predict 200, measure 200 (MLP on wasm, trees on cpu)\n')
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'benchmarks/advice-check.mts')], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines = (r.stdout ?? '').trim().split('\n')
  out.advice = JSON.parse(lines.pop() || '[]')
  text += `\n\n${lines.join('\n')}`
}

if (env('BENCH_DATA', '1') !== '0') {
  // issue 14: the user's CSV into the data cache, and training on it vs generated data
  process.stderr.write(`\n== your own data: load a ${env('BENCH_DATA_ROWS', '200000')} × 101 CSV, load it again, train on it vs generated data\n`)
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(root, 'benchmarks/data-load.mts'), '--rows', env('BENCH_DATA_ROWS', '200000'), '--size', env('BENCH_DATA_SIZE', '10000')],
    { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const lines = (r.stdout ?? '').trim().split('\n')
  out.data = r.status === 0 ? JSON.parse(lines.pop() || '{}') : null
  text += r.status === 0 ? `\n\n${lines.join('\n')}` : `\n\nyour own data: the pass exited ${r.status}`
}

writeFileSync(join(outDir, 'summary.json'), JSON.stringify(out, null, 2))
process.stdout.write(text + `\n\n(JSON: ${join(outDir, 'summary.json')})\n`)
