// Combines what benchmarks/gpu-check.sh collected in one folder into ONE JSON object on stdout:
// the adapter probe, nvidia-smi, every part (a trainpool run compacted to its summary, device
// counters and GPU busy; the PyTorch reference; the calibration), and the issues' targets checked.
// Usage: node combine.mjs DIR   (reads meta.json, adapter.json, nvidia-smi-*.txt, torch.skipped and
// part-<name>.{json,exit,wall_s,limit_s,log,skipped}; every file is optional)
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs'
import os from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const STRATEGIES = ['sequential', 'pool', 'batched']

/** A GPU-busy mean from fewer 1 Hz samples than this is not judged: a few seconds of a run are not its mean. */
export const MIN_BUSY_SAMPLES = 10

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
    const a = acc.get(s.strategy) ?? { sum: 0, n: 0 }
    a.sum += read.reduce((x, g) => x + g.util, 0) / read.length
    a.n += 1
    acc.set(s.strategy, a)
  }
  return STRATEGIES.filter((s) => acc.has(s)).map((s) => ({ strategy: s, meanUtil: acc.get(s).sum / acc.get(s).n, samples: acc.get(s).n }))
}

/** An MLP program's readbacks per epoch: each fused program (W of them batched, one per model otherwise) also reads its test MSE once. */
export function readbacksPerEpoch(device, row, epochs) {
  const programs = row.strategy === 'batched' ? row.workers : row.models
  return (device.readbacks / programs - 1) / epochs
}

/** A trainpool run, compacted: each summary row with the device counters of its first measurement. */
export function compactRun(r) {
  if (!r || r.ok === false) return { ok: false, error: r?.error ?? 'no result JSON' }
  const counters = (s) =>
    r.measurements?.find(
      (m) => m.size === s.size && m.models === s.models && m.strategy === s.strategy && m.workers === s.workers && (m.backend ?? null) === (s.backend ?? null),
    )?.device ?? null
  const epochs = r.config?.model?.epochs ?? null
  return {
    ok: r.status === 'ok',
    status: r.status,
    error: r.error ?? null,
    backend: r.environment?.backend ?? null,
    device: r.environment?.device ?? null,
    backendFlags: r.environment?.backendFlags ?? null,
    model: r.config?.model ?? null,
    verification: r.verification && {
      sameWork: r.verification.sameWork,
      maxRelMseDiff: r.verification.maxRelMseDiff,
      tolerance: r.verification.tolerance,
      problems: r.verification.problems,
    },
    summary: (r.summary ?? []).map((s) => {
      const device = counters(s)
      return {
        ...(s.backend ? { backend: s.backend } : {}),
        size: s.size,
        models: s.models,
        strategy: s.strategy,
        workers: s.workers,
        medianMs: s.medianMs,
        minMs: s.minMs,
        maxMs: s.maxMs,
        speedupVsSequential: s.speedupVsSequential,
        warnings: s.warnings,
        ...(device ? { device, ...(epochs && r.config?.model?.kind === 'mlp' ? { readbacksPerEpoch: readbacksPerEpoch(device, s, epochs) } : {}) } : {}),
      }
    }),
    gpuBusy: gpuBusy(r.telemetry?.samples),
    autoChoice: r.environment?.auto ?? null,
    warnings: r.warnings ?? [],
  }
}

function partOf(dir, name) {
  const skipped = text(dir, `part-${name}.skipped`)
  if (skipped != null) return { skipped: skipped.trim() }
  const exit = text(dir, `part-${name}.exit`)
  const wall = text(dir, `part-${name}.wall_s`)
  const limit = text(dir, `part-${name}.limit_s`)
  const base = {
    exitCode: exit == null ? null : Number(exit.trim()),
    wallS: wall == null ? null : Number(wall.trim()),
    limitS: limit == null ? null : Number(limit.trim()),
  }
  const r = json(dir, `part-${name}.json`)
  const logTail = base.exitCode === 0 ? undefined : tail(text(dir, `part-${name}.log`))
  // its own JSON, as the profiler printed it
  if (name === 'trees-profile') return { ...base, timestampQuantisation: r?.timestampQuantisation ?? null, profile: r, ...(logTail ? { logTail } : {}) }
  if (name.startsWith('torch')) return { ...base, ...(r ?? { ok: false, error: 'no JSON' }), ...(logTail ? { logTail } : {}) }
  // the calibration's own table and what auto picks, as `trainpool calibrate` printed them
  if (name === 'calibrate') return { ...base, printed: tail(text(dir, `part-${name}.log`), 40) }
  const run = compactRun(r)
  // the 1 Hz samples the GPU-busy target needs (the part exists for them)
  const busy = name === 'mlp-busy' ? { busySamples: busySamples(run, 'batched') } : {}
  return { ...base, ...run, ...busy, ...(logTail ? { logTail } : {}) }
}

/** Whether a part's GPU-busy mean for a strategy rests on enough 1 Hz samples to judge. */
export function busySamples(part, strategy) {
  const got = part?.gpuBusy?.find((b) => b.strategy === strategy)?.samples ?? 0
  return { strategy, got, needed: MIN_BUSY_SAMPLES, enough: got >= MIN_BUSY_SAMPLES }
}

const row = (part, strategy, pick = (rows) => rows[0]) => {
  const rows = (part?.summary ?? []).filter((s) => s.strategy === strategy).sort((a, b) => a.medianMs - b.medianMs)
  return rows.length ? pick(rows) : null
}
const busyOf = (part, strategy) => part?.gpuBusy?.find((b) => b.strategy === strategy)?.meanUtil ?? null

/** What issues 32 and 33 ask of the H200, checked against this run (met null: not measured). */
export function targets(parts, softwareAdapter) {
  const out = []
  /** judged false: measured, but on too little to say met or missed (met null, the text says why) */
  const add = (issue, what, value, limit, better, unit, extra = '', judged = true) => {
    const met = value == null || !judged ? null : better === 'lower' ? value <= limit : value >= limit
    const fmt = (v) =>
      v == null ? 'not measured' : unit === 'ms' ? `${v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(1)} ms`}` : `${v.toFixed(1)}${unit}`
    out.push({
      issue,
      what,
      value,
      limit,
      met,
      text: `${fmt(value)} (${better === 'lower' ? '≤' : '≥'} ${fmt(limit)})${extra}${softwareAdapter ? ' — CPU adapter: not GPU numbers' : ''}`,
    })
  }
  const b10 = row(parts['mlp-10k'], 'batched')
  const torch10 = parts['torch-10k']
  add(
    32,
    'MLP batched, 50 models × 10 000 rows',
    b10?.medianMs ?? null,
    50,
    'lower',
    'ms',
    torch10?.ok ? `; PyTorch vmap ${torch10.vmap.medianMs.toFixed(1)} ms` : '',
  )
  add(32, 'MLP batched, 50 models × 200 000 rows', row(parts['mlp-200k'], 'batched')?.medianMs ?? null, 1000, 'lower', 'ms')
  add(
    32,
    'MLP sequential, 50 models × 10 000 rows',
    row(parts['mlp-10k'], 'sequential')?.medianMs ?? null,
    2500,
    'lower',
    'ms',
    torch10?.ok ? `; PyTorch loop ${(torch10.loop.medianMs / 1000).toFixed(2)} s` : '',
  )
  const addBusy = (issue, what, part, limit) => {
    const value = busyOf(part, 'batched')
    const { got, enough } = busySamples(part, 'batched')
    const extra = value == null ? '' : `; ${got} samples at 1 Hz${enough ? '' : `, too few to judge (≥ ${MIN_BUSY_SAMPLES} needed)`}`
    add(issue, what, value, limit, 'higher', ' %', extra, enough)
  }
  addBusy(32, 'GPU busy, MLP batched at 200 000 rows', parts['mlp-busy'], 60)
  add(32, 'MLP readbacks per epoch of a fused program (batched, 10 000 rows)', b10?.readbacksPerEpoch ?? null, 1, 'lower', '', ' (plus one for its test MSE)')
  const scaling = parts['cpu-scaling']?.summary ?? []
  const w = (n) => scaling.find((s) => s.workers === n)?.medianMs ?? null
  add(32, 'CPU pool (onnxruntime, 64 models): W=16 against W=1', w(1) && w(16) ? w(1) / w(16) : null, 12, 'higher', '×')
  const all = parts['mlp-all']
  const auto = parts.auto
  if (all?.summary?.length || auto?.summary?.length) {
    const fastest = (backend) => (all?.summary ?? []).filter((s) => s.backend === backend).sort((a, b) => a.medianMs - b.medianMs)[0]?.medianMs ?? null
    const [gpu, cpu] = [fastest('webgpu'), fastest('onnxruntime')]
    const shouldPick = gpu != null && cpu != null ? (gpu <= cpu ? 'webgpu' : 'onnxruntime') : null
    const picked = auto?.backend ?? null
    out.push({
      issue: 32,
      what: 'auto picks the faster of webgpu and onnxruntime at the article shape',
      value: picked,
      limit: shouldPick,
      met: picked && shouldPick ? picked === shouldPick : null,
      text: `auto → ${picked ?? 'not measured'}; fastest batched: webgpu ${gpu ?? 'n/a'} ms, onnxruntime ${cpu ?? 'n/a'} ms`,
    })
  }
  add(33, 'trees batched, 50 models × 10 000 rows', row(parts['trees-10k'], 'batched')?.medianMs ?? null, 1500, 'lower', 'ms')
  add(
    33,
    'trees batched, 50 models × 200 000 rows',
    row(parts['trees-200k'], 'batched')?.medianMs ?? null,
    15_000,
    'lower',
    'ms',
    parts['trees-cpu-200k']?.summary?.[0] ? `; CPU engine pool W=16 ${(parts['trees-cpu-200k'].summary[0].medianMs / 1000).toFixed(1)} s` : '',
  )
  const seq = row(parts['trees-seq'], 'sequential')
  add(33, 'trees sequential, 10 000 rows, a model', seq ? seq.medianMs / seq.models : null, 150, 'lower', 'ms')
  addBusy(33, 'GPU busy, trees batched at 200 000 rows', parts['trees-200k'], 70)
  return out
}

export function combine(dir) {
  const meta = json(dir, 'meta.json') ?? {}
  const probe = json(dir, 'adapter.json')
  const list = text(dir, 'nvidia-smi-L.txt')
  const query = text(dir, 'nvidia-smi-query.txt')
  const PART_FILE = /^part-(.+)\.(json|exit|skipped)$/
  const names = [...new Set(existsSync(dir) ? readdirSync(dir).flatMap((f) => PART_FILE.exec(f)?.slice(1, 2) ?? []) : [])]
  const parts = Object.fromEntries(names.sort().map((n) => [n, partOf(dir, n)]))
  const torchSkipped = text(dir, 'torch.skipped')
  return {
    kind: 'trainpool-gpu-check',
    version: 2,
    startedAt: meta.startedAt ?? null,
    finishedAt: new Date().toISOString(),
    host: {
      hostname: os.hostname(),
      os: `${os.type()} ${os.release()} ${os.arch()}`,
      cpu: os.cpus()[0]?.model?.trim() ?? null,
      cpuCount: os.cpus().length,
      memoryBytes: os.totalmem(),
      node: process.versions.node,
    },
    options: meta.options ?? null,
    // the check stopped before any part (e.g. the project is not built): why
    stopped: meta.stopped ?? null,
    vulkan: meta.vulkan ?? null,
    adapter: probe && { ...probe, software: meta.softwareAdapter ?? null },
    nvidiaSmi:
      list == null && query == null ? null : { list: list?.trim().split('\n').filter(Boolean) ?? [], gpus: query?.trim().split('\n').filter(Boolean) ?? [] },
    torch: torchSkipped == null ? null : { skipped: torchSkipped.trim() },
    parts,
    targets: targets(parts, meta.softwareAdapter ?? false),
  }
}

// run as a script (through a symlinked folder too), not imported by the tests
if (process.argv[1] && realpathSync(resolve(process.argv[1])) === realpathSync(fileURLToPath(import.meta.url))) {
  const dir = process.argv[2]
  if (!dir) {
    process.stderr.write('usage: node combine.mjs DIR\n')
    process.exit(2)
  }
  process.stdout.write(`${JSON.stringify(combine(dir), null, 2)}\n`)
}
