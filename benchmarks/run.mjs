// `npm run bench`: the article's shape (100 features, 50 models, MLP 100→64→1, 3 epochs) on wasm,
// sequential vs pool (W = 1..cores) vs batched (W = 1 and cores), medians of 3 repeats, ratios
// and training GFLOP/s next to the backend's own large-GEMM GFLOP/s measured in the same run.
// Timing is a benchmark, not a test: this machine is shared and noisy, so read the ratios.
// Options (env): BENCH_SIZES (default 10000,50000), BENCH_BACKEND (wasm), BENCH_REPEATS (3), BENCH_MODELS (50),
// BENCH_WEBGPU_SIZE (2000; 0 skips the webgpu pass), BENCH_RSS_SIZE (200000; 0 skips the peak-RSS pass).
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const outDir = join(root, 'bench-results')
mkdirSync(outDir, { recursive: true })
const cores = os.cpus().length
const backend = process.env.BENCH_BACKEND ?? 'wasm'
const sizes = process.env.BENCH_SIZES ?? '10000,50000'
const models = process.env.BENCH_MODELS ?? '50'
const repeats = process.env.BENCH_REPEATS ?? '3'
const webgpuSize = Number(process.env.BENCH_WEBGPU_SIZE ?? 2000)
const workerCounts = Array.from({ length: cores }, (_, i) => i + 1).join(',')

function gemm(b) {
  const out = execFileSync(process.execPath, [join(root, 'benchmarks/gemm-reference.mjs'), b], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
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

function report(run, reference) {
  const lines = []
  const peak = 150 * cores // ≈ float32 FMA peak of this machine (AVX-512, ~150 GFLOP/s per core)
  for (const size of run.config.sizes) {
    const rows = run.summary.filter((s) => s.size === size)
    const get = (strategy, w) => rows.find((s) => s.strategy === strategy && s.workers === w)
    const seq = get('sequential', 1)
    lines.push(`\n${run.environment.backend} on ${run.environment.device} — ${size} rows × ${run.config.models.join(',')} models, hidden ${run.config.hidden}, ${run.config.epochs} epochs, medians of ${run.config.repeats}`)
    lines.push(`${'strategy'.padEnd(12)} ${'W'.padStart(2)} ${'median'.padStart(9)} ${'min'.padStart(9)} ${'max'.padStart(9)} ${'vs seq'.padStart(8)} ${'GFLOP/s'.padStart(8)} ${'% GEMM'.padStart(7)} ${'% peak'.padStart(7)}`)
    for (const s of rows) {
      lines.push(
        `${s.strategy.padEnd(12)} ${String(s.workers).padStart(2)} ${(s.medianMs / 1000).toFixed(2).padStart(8)}s ${(s.minMs / 1000).toFixed(2).padStart(8)}s ${(s.maxMs / 1000).toFixed(2).padStart(8)}s ${`${(s.speedupVsSequential ?? NaN).toFixed(2)}×`.padStart(8)} ${s.gflops.toFixed(2).padStart(8)} ${`${((s.gflops / reference.gflops) * 100).toFixed(0)}%`.padStart(7)} ${`${((s.gflops / peak) * 100).toFixed(1)}%`.padStart(7)}`,
      )
    }
    const p1 = get('pool', 1)
    const pW = get('pool', cores)
    const b1 = get('batched', 1)
    const bW = get('batched', cores)
    lines.push(`ratios: batched(W=1)/sequential ${ratio(seq, b1)}, batched(W=${cores})/sequential ${ratio(seq, bW)}, pool W=${cores} vs W=1 ${ratio(p1, pW)} (target ≥ ${(0.85 * cores).toFixed(2)}×)`)
    for (const w of run.warnings) lines.push(`warning: ${w}`)
  }
  lines.push(`reference: ${reference.backend} ${reference.n}³ matmul ${reference.gflops.toFixed(1)} GFLOP/s (one process); machine float32 peak ≈ ${peak} GFLOP/s on ${cores} cores`)
  lines.push(`same work: ${run.verification.sameWork} (max rel. MSE Δ ${run.verification.maxRelMseDiff.toExponential(1)})`)
  return lines.join('\n')
}

const ratio = (a, b) => (a && b ? `${(a.medianMs / b.medianMs).toFixed(2)}×` : 'n/a')

const reference = gemm(backend)
const main = bench(`bench-${backend}`, ['--backend', backend, '--sizes', sizes, '--models', models, '--workers', workerCounts, '--repeats', repeats, '--epochs', '3', '--hidden', '64', '--batch-size', '512', '--features', '100'])
const out = { reference, main: { summary: main.summary, verification: main.verification, environment: main.environment, status: main.status } }
let text = report(main, reference)
if (webgpuSize > 0) {
  try {
    const gpuRef = gemm('webgpu')
    const gpu = bench('bench-webgpu', ['--backend', 'webgpu', '--sizes', String(webgpuSize), '--models', '16', '--workers', '1', '--repeats', '1', '--epochs', '1'])
    out.webgpu = { reference: gpuRef, summary: gpu.summary, environment: gpu.environment, verification: gpu.verification }
    text += '\n' + report(gpu, gpuRef)
  } catch (err) {
    text += `\nwebgpu pass skipped: ${err.message.split('\n')[0]}`
  }
}
const rssSize = Number(process.env.BENCH_RSS_SIZE ?? 200000)
if (rssSize > 0) {
  // peak RSS per worker at a large size (target ≤ 400 MB): one epoch, one repeat is enough
  const big = bench('bench-rss', ['--backend', backend, '--sizes', String(rssSize), '--models', models, '--workers', String(cores), '--strategies', 'pool,batched', '--repeats', '1', '--epochs', '1'])
  const peaks = big.measurements.map((m) => `${m.strategy} W=${m.workers}: ${m.peakRssBytes.map((b) => `${(b / 2 ** 20).toFixed(0)} MiB`).join(', ')}`)
  out.rss = big.measurements.map((m) => ({ strategy: m.strategy, workers: m.workers, size: m.size, peakRssBytes: m.peakRssBytes, wallMs: m.wallMs }))
  text += `\n\npeak RSS per worker at ${rssSize} rows (target ≤ 400 MiB): ${peaks.join('; ')}`
}
writeFileSync(join(outDir, 'summary.json'), JSON.stringify(out, null, 2))
process.stdout.write(text + `\n\n(JSON: ${join(outDir, 'summary.json')})\n`)
