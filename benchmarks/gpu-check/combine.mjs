// Combines what benchmarks/gpu-check.sh collected in one folder into ONE JSON object on stdout:
// adapter probe, nvidia-smi, the trainpool result (compact: summary, verification, GPU busy per
// strategy from its telemetry), the PyTorch reference, and the ratios between them.
// Usage: node combine.mjs DIR   (files it reads, all optional: meta.json, adapter.json,
// nvidia-smi-L.txt, nvidia-smi-query.txt, trainpool.json, trainpool.exit, trainpool.wall_s,
// trainpool.log, torch.json, torch.skipped, torch.log, xgboost.json, xgboost.exit, xgboost.log,
// xgboost.skipped, trees.json, trees.exit, trees.wall_s, trees.log, trees.skipped)
import { existsSync, readFileSync } from 'node:fs'
import os from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const STRATEGIES = ['sequential', 'pool', 'batched']

function text(dir, name) {
  const p = join(dir, name)
  return existsSync(p) ? readFileSync(p, 'utf8') : null
}

function json(dir, name) {
  const t = text(dir, name)
  if (t == null) return null
  try {
    return JSON.parse(t)
  } catch (err) {
    // the last line that parses (a tool may print warnings first)
    for (const line of t.trim().split('\n').reverse()) {
      try {
        return JSON.parse(line)
      } catch {
        /* keep looking */
      }
    }
    return { ok: false, error: `unreadable ${name}: ${err.message}` }
  }
}

function tail(t, n = 20) {
  return t == null ? null : t.trim().split('\n').slice(-n).join('\n')
}

/** Mean utilization.gpu per strategy over measuring samples (same rule as contract/telemetry.ts). */
export function gpuBusy(samples) {
  const acc = new Map()
  for (const s of samples ?? []) {
    if (s.phase !== 'measuring' || !s.strategy) continue
    const read = (s.gpus ?? []).filter((g) => g.util != null && Number.isFinite(g.util))
    if (!read.length) continue
    const a = acc.get(s.strategy) ?? { sum: 0, n: 0, byGpu: new Map() }
    a.sum += read.reduce((x, g) => x + g.util, 0) / read.length
    a.n += 1
    for (const g of read) {
      const b = a.byGpu.get(g.index) ?? { sum: 0, n: 0 }
      b.sum += g.util
      b.n += 1
      a.byGpu.set(g.index, b)
    }
    acc.set(s.strategy, a)
  }
  return STRATEGIES.filter((s) => acc.has(s)).map((s) => {
    const a = acc.get(s)
    const perGpu = [...a.byGpu].sort((x, y) => x[0] - y[0]).map(([index, b]) => ({ index, meanUtil: b.sum / b.n }))
    return { strategy: s, meanUtil: a.sum / a.n, samples: a.n, perGpu }
  })
}

function peakGpuMemMiB(samples) {
  let peak = null
  for (const s of samples ?? []) for (const g of s.gpus ?? []) if (g.memUsedMiB != null) peak = Math.max(peak ?? 0, g.memUsedMiB)
  return peak
}

function compactTrainpool(dir, name = 'trainpool') {
  const r = json(dir, `${name}.json`)
  const exit = text(dir, `${name}.exit`)
  const wall = text(dir, `${name}.wall_s`)
  const base = { exitCode: exit == null ? null : Number(exit.trim()), wallS: wall == null ? null : Number(wall.trim()) }
  if (!r || r.ok === false) return { ...base, ok: false, error: r?.error ?? 'no result JSON', logTail: tail(text(dir, `${name}.log`)) }
  const samples = r.telemetry?.samples ?? []
  const busy = gpuBusy(samples)
  return {
    ...base,
    ok: r.status === 'ok',
    runId: r.runId,
    status: r.status,
    error: r.error ?? null,
    backend: r.environment?.backend ?? null,
    device: r.environment?.device ?? null,
    backendFlags: r.environment?.backendFlags ?? null,
    config: r.config && { sizes: r.config.sizes, models: r.config.models, workers: r.config.workers, strategies: r.config.strategies, epochs: r.config.epochs, batchSize: r.config.batchSize, hidden: r.config.hidden, repeats: r.config.repeats },
    verification: r.verification && { sameWork: r.verification.sameWork, maxRelMseDiff: r.verification.maxRelMseDiff, tolerance: r.verification.tolerance, problems: r.verification.problems },
    summary: (r.summary ?? []).map((s) => ({
      size: s.size, models: s.models, strategy: s.strategy, workers: s.workers,
      medianMs: s.medianMs, minMs: s.minMs, maxMs: s.maxMs, speedupVsSequential: s.speedupVsSequential, gflops: s.gflops, warnings: s.warnings,
    })),
    startupWarmupMs: (r.measurements ?? []).filter((m) => m.startupMs || m.warmupMs).map((m) => ({ strategy: m.strategy, workers: m.workers, startupMs: m.startupMs, warmupMs: m.warmupMs })),
    gpuTelemetry: r.telemetry ? { gpu: r.telemetry.gpu, samples: samples.length, intervalMs: r.telemetry.intervalMs, peakMemUsedMiB: peakGpuMemMiB(samples) } : null,
    gpuBusy: busy,
    gpuBusyLine: busy.length
      ? `GPU busy ${busy.map((b) => `${Math.round(b.meanUtil)} % in ${b.strategy}${b.perGpu.length > 1 ? ` (${b.perGpu.map((g) => `GPU ${g.index} ${Math.round(g.meanUtil)} %`).join(', ')})` : ''}`).join(', ')}`
      : null,
    warnings: r.warnings ?? [],
  }
}

/** Median per-model training time per (size, strategy, W): what the article's per-model times compare with. */
export function perModelTimes(measurements) {
  const groups = new Map()
  for (const m of measurements ?? []) {
    const key = `${m.size}/${m.strategy}/${m.workers}`
    const g = groups.get(key) ?? { size: m.size, strategy: m.strategy, workers: m.workers, ms: [] }
    for (const p of m.perModel ?? []) if (p.trainMs != null) g.ms.push(p.trainMs)
    groups.set(key, g)
  }
  return [...groups.values()].map(({ ms, ...g }) => {
    const s = [...ms].sort((a, b) => a - b)
    const median = s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : null
    return { ...g, models: s.length, medianTrainMs: median }
  })
}

/** The XGBoost (CUDA) part: skipped with the reason, or the run compacted with per-model times. */
function compactXgboost(dir) {
  const skipped = text(dir, 'xgboost.skipped')
  if (skipped != null) return { skipped: skipped.trim() }
  if (!existsSync(join(dir, 'xgboost.exit')) && !existsSync(join(dir, 'xgboost.json'))) return null
  const r = json(dir, 'xgboost.json')
  return { ...compactTrainpool(dir, 'xgboost'), model: r?.config?.model ?? null, perModel: perModelTimes(r?.measurements) }
}

/** Trees on webgpu (Trainpool's WGSL engine): skipped with the reason, or the run compacted. */
function compactTrees(dir) {
  const skipped = text(dir, 'trees.skipped')
  if (skipped != null) return { skipped: skipped.trim() }
  if (!existsSync(join(dir, 'trees.exit')) && !existsSync(join(dir, 'trees.json'))) return null
  const r = json(dir, 'trees.json')
  return { ...compactTrainpool(dir, 'trees'), model: r?.config?.model ?? null }
}

/** What issue 13 asks of trees on a GPU: batched on WebGPU ≥ 10× faster than XGBoost CUDA in a pool of 5 (when it ran), else than WebGPU sequential. */
export const TREES_TARGET = 10

export function treesComparison(trees, xgboost, software) {
  if (!trees?.summary?.length) return null
  const rows = trees.summary
  const batched = rows.filter((s) => s.strategy === 'batched').sort((a, b) => a.medianMs - b.medianMs)[0] ?? null
  if (!batched) return null
  const seq = rows.find((s) => s.strategy === 'sequential' && s.size === batched.size) ?? null
  const pools = (xgboost?.summary ?? []).filter((s) => s.strategy === 'pool' && s.size === batched.size && s.models === batched.models)
  const xgbPool = pools.find((s) => s.workers === 5) ?? pools.sort((a, b) => a.medianMs - b.medianMs)[0] ?? null
  const ratio = (a, b) => (a != null && b != null && b > 0 ? a / b : null)
  const vsSeq = ratio(seq?.medianMs, batched.medianMs)
  const vsXgb = ratio(xgbPool?.medianMs, batched.medianMs)
  const against = vsXgb != null ? `XGBoost (${xgboost.device ?? 'CUDA'}) in a pool of ${xgbPool.workers}` : 'WebGPU sequential'
  const speedup = vsXgb ?? vsSeq
  const why = vsXgb != null ? '' : xgboost?.skipped ? ` (XGBoost CUDA not run: ${xgboost.skipped})` : xgboost ? ' (the XGBoost run gave no pool measurement at this size)' : ' (no XGBoost part)'
  const fmt = (x) => (x == null ? 'n/a' : `${x.toFixed(1)}×`)
  const met = speedup != null && speedup >= TREES_TARGET
  return {
    size: batched.size,
    models: batched.models,
    webgpuBatchedMs: batched.medianMs,
    webgpuSequentialMs: seq?.medianMs ?? null,
    batchedVsSequential: vsSeq,
    xgboostPoolMs: xgbPool?.medianMs ?? null,
    xgboostPoolWorkers: xgbPool?.workers ?? null,
    batchedVsXgboostPool: vsXgb,
    against,
    speedup,
    target: TREES_TARGET,
    met,
    note:
      `${batched.models} GBDT models × ${batched.size} rows: batched on WebGPU ${fmt(speedup)} faster than ${against}${why}; target ≥ ${TREES_TARGET}× ${met ? 'met' : 'NOT met'}` +
      (vsXgb != null ? `; vs WebGPU sequential ${fmt(vsSeq)}` : '') +
      (software ? ' — on a CPU (software) adapter: NOT GPU numbers' : ''),
  }
}

function comparison(tp, torch) {
  const rows = tp.summary ?? []
  const best = (strategy) => rows.filter((s) => s.strategy === strategy).sort((a, b) => a.medianMs - b.medianMs)[0] ?? null
  const seq = best('sequential')
  const batched = best('batched')
  const pool = best('pool')
  const ratio = (a, b) => (a != null && b != null && b > 0 ? a / b : null)
  const out = {
    trainpoolSequentialMs: seq?.medianMs ?? null,
    trainpoolBestPoolMs: pool?.medianMs ?? null,
    trainpoolBestPoolWorkers: pool?.workers ?? null,
    trainpoolBestBatchedMs: batched?.medianMs ?? null,
    trainpoolBestBatchedWorkers: batched?.workers ?? null,
    trainpoolBatchedSpeedup: ratio(seq?.medianMs, batched?.medianMs),
  }
  if (torch?.ok) {
    Object.assign(out, {
      torchLoopMs: torch.loop.medianMs,
      torchVmapMs: torch.vmap.medianMs,
      torchVmapSpeedup: torch.speedupVmapVsLoop,
      /** > 1: trainpool's batched is that many times slower than the torch.func vmap ensemble */
      trainpoolBatchedVsTorchVmap: ratio(batched?.medianMs, torch.vmap.medianMs),
      trainpoolSequentialVsTorchLoop: ratio(seq?.medianMs, torch.loop.medianMs),
    })
  }
  return out
}

export function combine(dir) {
  const meta = json(dir, 'meta.json') ?? {}
  const probe = json(dir, 'adapter.json')
  const adapter = probe && { ...probe, software: meta.softwareAdapter ?? null }
  const list = text(dir, 'nvidia-smi-L.txt')
  const query = text(dir, 'nvidia-smi-query.txt')
  const trainpool = existsSync(join(dir, 'trainpool.exit')) || existsSync(join(dir, 'trainpool.json')) ? compactTrainpool(dir) : null
  const xgboost = compactXgboost(dir)
  const trees = compactTrees(dir)
  const skipped = text(dir, 'torch.skipped')
  let torch = skipped != null ? { skipped: skipped.trim() } : json(dir, 'torch.json')
  if (torch && torch.ok === false) torch = { ...torch, logTail: tail(text(dir, 'torch.log')) }
  return {
    kind: 'trainpool-gpu-check',
    version: 1,
    startedAt: meta.startedAt ?? null,
    finishedAt: new Date().toISOString(),
    host: { hostname: os.hostname(), os: `${os.type()} ${os.release()} ${os.arch()}`, cpu: os.cpus()[0]?.model?.trim() ?? null, cpuCount: os.cpus().length, memoryBytes: os.totalmem(), node: process.versions.node },
    options: meta.options ?? null,
    vulkan: meta.vulkan ?? null,
    adapter,
    nvidiaSmi: list == null && query == null ? null : { list: list?.trim().split('\n').filter(Boolean) ?? [], gpus: query?.trim().split('\n').filter(Boolean) ?? [] },
    trainpool,
    torch: torch ?? null,
    xgboost,
    trees,
    treesComparison: trees ? treesComparison(trees, xgboost, meta.softwareAdapter ?? false) : null,
    comparison: trainpool ? comparison(trainpool, torch) : null,
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2]
  if (!dir) {
    process.stderr.write('usage: node combine.mjs DIR\n')
    process.exit(2)
  }
  process.stdout.write(`${JSON.stringify(combine(dir), null, 2)}\n`)
}
