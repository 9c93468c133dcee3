// Where the WGSL trees engine's time goes: trainings (each after a one-round warm-up that compiles
// the pipelines) of N models on synthetic data (100 features), batched (one group) or sequential
// (one model at a time), and ONE JSON line: per part the wall ms, ms a model, the device counters
// (dispatches, submits, read-backs, bytes, host ms between submits), the engine's stats
// (device/host-planned rounds, histogram kernels, histogram updates), with --profile the device ms
// per kernel (timestamp queries; one extra read-back a submit), histogram updates per second of
// histogram-kernel time and the share of the wall the kernels ran, and with --check K the first K
// models' tree hashes against the CPU engine. Dawn's timestamp quantisation (a 65 536 ns grid) is
// asked off; `timestampQuantisation` says whether it took effect, read from the timestamps themselves.
//
//   npx tsx benchmarks/gbdt/webgpu-profile.mts [--rows 8000] [--models 50] [--rounds 100]
//        [--depth 6] [--sequential] [--profile] [--check 2] [--host-planned]
//        [--histograms auto|global|shared|shared32|shared64]
//   npx tsx benchmarks/gbdt/webgpu-profile.mts --suite [--quick] [--budget 60]
//        the issue-33 shapes, profiled: 50 models × 8 000 training rows batched (2 checked against
//        the CPU engine), 5 models × 8 000 sequential, the first again with 64-bit workgroup
//        histograms only (20 rounds: updates/s per level against the 32-bit ones), 50 × 160 000
//        batched (20 rounds); a part that would start after --budget seconds is skipped and said
//        so. --quick: small shapes.
//
// Rows are training rows (the article's 10 000 / 200 000 rows are 8 000 / 160 000 after its 80/20 split).
//
// Where there is no tsx (a packed GPU machine: runtime dependencies only), bundle it into out/ after
// `npm run build` and before packing, and run it with node from the project:
//   npx esbuild benchmarks/gbdt/webgpu-profile.mts --bundle --platform=node --format=esm \
//     --target=node20 --external:webgpu --outfile=out/bench/webgpu-profile.mjs
//   node out/bench/webgpu-profile.mjs --suite
import { prepareGbdtData, trainGbdtGroup, treeHash } from '../../src-main/engine/gbdt/index.ts'
import { syntheticRegression } from '../../src-main/engine/gbdt/synthetic.ts'
import { disposeGbdtData, uploadGbdtData } from '../../src-main/engine/gbdt-webgpu/device-data.ts'
import { UNQUANTISED_TIMESTAMPS } from '../../src-main/engine/webgpu/dawn.ts'
import { openWgslDevice, type WgslDevice } from '../../src-main/engine/webgpu/device.ts'
import type { HistogramMode } from '../../src-main/engine/gbdt-webgpu/options.ts'
import { describeChunks } from '../../src-main/engine/gbdt-webgpu/plan.ts'
import { chunkPlanFor, emptyStats, trainGbdtGroupWebgpu } from '../../src-main/engine/gbdt-webgpu/trainer.ts'
import { subtractDeviceCounters } from '../../src-shared/contract/device-counters.ts'
import { timestampGrid } from '../gpu-check/timestamp-grid.ts'

const args = process.argv.slice(2)
const opt = (name: string, dflt: number) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? Number(args[i + 1]) : dflt
}
const text = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : dflt
}

interface Shape {
  name: string
  rows: number
  models: number
  rounds: number
  depth: number
  sequential: boolean
  profile: boolean
  check: number
  hostPlanned: boolean
  histogramMode: HistogramMode
}

const FEATURES = 100

/**
 * Histogram updates per second of histogram-kernel device time, per kernel and per tree level
 * (device-planned rounds: timed as kernel@level; host-planned passes are all level 0).
 */
function perKernel(stats: ReturnType<typeof emptyStats>): { byKernel: Record<string, number>; byLevel: Record<string, number> } {
  const updates: Record<string, number> = {}
  const ms: Record<string, number> = {}
  const byLevel: Record<string, number> = {}
  for (const [label, t] of Object.entries(stats.kernelMs)) {
    const [kernel, level] = label.split('@')
    if (level === undefined || !kernel.startsWith('hist')) continue
    const u = stats.histogramUpdatesByLevel[Number(level)] ?? 0
    updates[kernel] = (updates[kernel] ?? 0) + u
    ms[kernel] = (ms[kernel] ?? 0) + t
    if (t > 0) byLevel[label] = Math.round((u / t) * 1000)
  }
  const byKernel: Record<string, number> = {}
  for (const k of Object.keys(updates)) if (ms[k] > 0) byKernel[k] = Math.round((updates[k] / ms[k]) * 1000)
  return { byKernel, byLevel }
}

async function measure(gpu: WgslDevice, s: Shape): Promise<Record<string, unknown>> {
  const d = syntheticRegression({ rows: s.rows, features: FEATURES, seed: 3 })
  const data = prepareGbdtData(d.x, d.y, s.rows, FEATURES, 256)
  const gd = uploadGbdtData(gpu, data)
  try {
    const params = { rounds: s.rounds, maxDepth: s.depth, eta: 0.1, subsample: 0.8, colsampleBytree: 0.8, maxBin: 256 }
    const seeds = Array.from({ length: s.models }, (_, i) => 43 + i)
    const options = { profile: s.profile, hostPlanned: s.hostPlanned, histogramMode: s.histogramMode }
    await trainGbdtGroupWebgpu(gpu, gd, { ...params, rounds: 1 }, s.sequential ? seeds.slice(0, 1) : seeds, options)
    const stats = emptyStats()
    const before = gpu.work.snapshot()
    const pacedBefore = gpu.work.readPacing()
    const t0 = performance.now()
    const trained: Awaited<ReturnType<typeof trainGbdtGroupWebgpu>> = []
    if (s.sequential) for (const seed of seeds) trained.push(...(await trainGbdtGroupWebgpu(gpu, gd, params, [seed], { ...options, stats })))
    else trained.push(...(await trainGbdtGroupWebgpu(gpu, gd, params, seeds, { ...options, stats })))
    const wallMs = performance.now() - t0
    const device = subtractDeviceCounters(gpu.work.snapshot(), before)
    const pacedAfter = gpu.work.readPacing()
    const histMs = Object.entries(stats.kernelMs)
      .filter(([k]) => k.startsWith('hist'))
      .reduce((sum, [, v]) => sum + v, 0)
    const kernelTotalMs = Object.values(stats.kernelMs).reduce((sum, v) => sum + v, 0)
    let parity: boolean | null = null
    if (s.check > 0) {
      const cpu = seeds.slice(0, s.check).map((seed) => treeHash(trainGbdtGroup(data, params, [seed])[0]))
      parity = cpu.every((h, i) => h === treeHash(trained[i]))
    }
    return {
      ...s,
      chunks: describeChunks(chunkPlanFor(gpu, gd, params, s.sequential ? 1 : s.models)),
      wallMs: Math.round(wallMs),
      msPerModel: +(wallMs / s.models).toFixed(1),
      device: { ...device, hostMsBetweenSubmits: Math.round(device.hostMsBetweenSubmits) },
      hostIdleShare: +(device.hostMsBetweenSubmits / wallMs).toFixed(3),
      hostMsPerRound: +(device.hostMsBetweenSubmits / s.rounds).toFixed(1),
      // reads that slept before mapping (Dawn's map polling spins a core: src-main/engine/webgpu/counters.ts)
      readPacing: {
        paced: pacedAfter.paced - pacedBefore.paced,
        sleptMs: Math.round(pacedAfter.sleptMs - pacedBefore.sleptMs),
        overshot: pacedAfter.overshot - pacedBefore.overshot,
        overshotMs: Math.round(pacedAfter.overshotMs - pacedBefore.overshotMs),
      },
      stats: { ...stats, waitMs: Math.round(stats.waitMs), kernelMs: Object.fromEntries(Object.entries(stats.kernelMs).map(([k, v]) => [k, +v.toFixed(1)])) },
      histogramUpdatesPerSecond: histMs > 0 ? Math.round((stats.histogramUpdates / histMs) * 1000) : null,
      histogramUpdatesPerSecondBy: perKernel(stats),
      kernelBusyShare: s.profile ? +(kernelTotalMs / wallMs).toFixed(3) : null,
      parityWithCpu: parity,
    }
  } finally {
    disposeGbdtData(gpu, gd)
  }
}

const base = {
  rounds: opt('rounds', 100),
  depth: opt('depth', 6),
  hostPlanned: args.includes('--host-planned'),
  histogramMode: text('histograms', 'auto') as HistogramMode,
}
const gpu = await openWgslDevice('trainpool-gbdt', [UNQUANTISED_TIMESTAMPS])
const grid = await timestampGrid(gpu)
/** what per-kernel times can be trusted to: 'off' (raw ticks), 'on' (the adapter kept Dawn's grid), null (no timestamps) */
const timestampQuantisation = {
  asked: 'off',
  tookEffect: grid === null ? null : !grid.quantised,
  gridNs: grid?.gridNs ?? null,
  note:
    grid === null
      ? 'no timestamp-query on this device (or its readings did not move): no per-kernel times'
      : grid.quantised
        ? `still quantised: readings on a ${grid.gridNs} ns grid, so per-kernel times are that coarse`
        : `off: readings on a ${grid.gridNs} ns grid (raw ticks)`,
}
console.error(`webgpu-profile: timestamp quantisation ${timestampQuantisation.note}`)
const started = performance.now()
const parts: Record<string, unknown>[] = []
if (args.includes('--suite')) {
  const quick = args.includes('--quick')
  const budgetMs = opt('budget', 60) * 1000
  const suite: Shape[] = [
    { ...base, name: 'batched-10k', rows: quick ? 2000 : 8000, models: quick ? 6 : 50, sequential: false, profile: true, check: 2 },
    { ...base, name: 'sequential-10k', rows: quick ? 2000 : 8000, models: quick ? 2 : 5, sequential: true, profile: true, check: 0 },
    {
      ...base,
      name: 'batched-10k-64bit',
      rows: quick ? 2000 : 8000,
      models: quick ? 6 : 50,
      rounds: Math.min(base.rounds, 20),
      sequential: false,
      profile: true,
      check: 0,
      histogramMode: 'shared64' as HistogramMode,
    },
    // 20 rounds: the kernels' profile (trainpool bench's trees-200k part times the full 100)
    {
      ...base,
      name: 'batched-200k',
      rows: quick ? 8000 : 160_000,
      models: quick ? 6 : 50,
      rounds: Math.min(base.rounds, 20),
      sequential: false,
      profile: true,
      check: 0,
    },
  ].map((s) => (quick ? { ...s, rounds: Math.min(s.rounds, 10) } : s))
  for (const s of suite) {
    if (performance.now() - started > budgetMs) parts.push({ name: s.name, skipped: `over the ${budgetMs / 1000} s budget` })
    else parts.push(await measure(gpu, s))
  }
} else {
  const sequential = args.includes('--sequential')
  parts.push(
    await measure(gpu, {
      ...base,
      name: sequential ? 'sequential' : 'batched',
      rows: opt('rows', 8000),
      models: opt('models', 50),
      sequential,
      profile: args.includes('--profile'),
      check: opt('check', 0),
    }),
  )
}
console.log(
  JSON.stringify({
    adapter: gpu.description,
    hardware: gpu.hardware,
    timestamps: gpu.timestamps,
    timestampQuantisation,
    features: FEATURES,
    totalMs: Math.round(performance.now() - started),
    parts,
  }),
)
gpu.release()
