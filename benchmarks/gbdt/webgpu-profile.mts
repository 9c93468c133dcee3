// Where the WGSL trees engine's time goes: one training (after a one-round warm-up that compiles
// the pipelines) of N models on synthetic data, batched (one group) or sequential (one model at a
// time), and one JSON line: wall ms, ms a model, the device counters (dispatches, submits,
// read-backs, bytes, host ms between submits), the engine's stats (device/host-planned rounds,
// histogram kernels, histogram updates), with --profile the device ms per kernel (timestamp
// queries; one extra read-back a submit) and histogram updates per second of histogram kernel
// time, and with --check K the first K models' tree hashes against the CPU engine.
//
//   npx tsx benchmarks/gbdt/webgpu-profile.mts [--rows 8000] [--models 50] [--rounds 100]
//        [--features 100] [--depth 6] [--sequential] [--profile] [--check 2] [--host-planned]
//        [--histograms auto|global|shared|shared32|shared64]
//
// --rows is training rows (the article's 10 000 rows are 8 000 after its 80/20 split).
import { prepareGbdtData, trainGbdtGroup, treeHash } from '../../src-main/engine/gbdt/index.ts'
import { syntheticRegression } from '../../src-main/engine/gbdt/synthetic.ts'
import { disposeGbdtData, uploadGbdtData } from '../../src-main/engine/gbdt-webgpu/data.ts'
import { openGbdtGpu } from '../../src-main/engine/gbdt-webgpu/gpu.ts'
import type { HistogramMode } from '../../src-main/engine/gbdt-webgpu/options.ts'
import { chunkPlanFor, emptyStats, trainGbdtGroupWebgpu } from '../../src-main/engine/gbdt-webgpu/trainer.ts'
import { describeChunks } from '../../src-main/engine/gbdt-webgpu/plan.ts'
import { subtractDeviceCounters } from '../../src-shared/contract/device-counters.ts'

const args = process.argv.slice(2)
const opt = (name: string, dflt: number) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? Number(args[i + 1]) : dflt
}
const text = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : dflt
}
const rows = opt('rows', 8000)
const models = opt('models', 50)
const rounds = opt('rounds', 100)
const features = opt('features', 100)
const depth = opt('depth', 6)
const check = opt('check', 0)
const sequential = args.includes('--sequential')
const profile = args.includes('--profile')
const hostPlanned = args.includes('--host-planned')
const histogramMode = text('histograms', 'auto') as HistogramMode

const d = syntheticRegression({ rows, features, seed: 3 })
const data = prepareGbdtData(d.x, d.y, rows, features, 256)
const gpu = await openGbdtGpu()
const gd = uploadGbdtData(gpu, data)
const params = { rounds, maxDepth: depth, eta: 0.1, subsample: 0.8, colsampleBytree: 0.8, maxBin: 256 }
const seeds = Array.from({ length: models }, (_, i) => 43 + i)
const options = { profile, hostPlanned, histogramMode }

await trainGbdtGroupWebgpu(gpu, gd, { ...params, rounds: 1 }, sequential ? seeds.slice(0, 1) : seeds, options)
const stats = emptyStats()
const before = gpu.work.snapshot()
const t0 = performance.now()
const trained = []
if (sequential) for (const s of seeds) trained.push(...(await trainGbdtGroupWebgpu(gpu, gd, params, [s], { ...options, stats })))
else trained.push(...(await trainGbdtGroupWebgpu(gpu, gd, params, seeds, { ...options, stats })))
const wallMs = performance.now() - t0
const device = subtractDeviceCounters(gpu.work.snapshot(), before)

const histMs = Object.entries(stats.kernelMs)
  .filter(([k]) => k.startsWith('hist'))
  .reduce((s, [, v]) => s + v, 0)
const kernelTotalMs = Object.values(stats.kernelMs).reduce((s, v) => s + v, 0)
let parity: boolean | null = null
if (check > 0) {
  const cpu = seeds.slice(0, check).map((s) => treeHash(trainGbdtGroup(data, params, [s])[0]))
  parity = cpu.every((h, i) => h === treeHash(trained[i]))
}
console.log(
  JSON.stringify({
    adapter: gpu.description,
    shape: { rows, models, rounds, features, depth, strategy: sequential ? 'sequential' : 'batched', histogramMode, hostPlanned },
    chunks: describeChunks(chunkPlanFor(gpu, gd, params, sequential ? 1 : models)),
    wallMs: Math.round(wallMs),
    msPerModel: +(wallMs / models).toFixed(1),
    device: { ...device, hostMsBetweenSubmits: Math.round(device.hostMsBetweenSubmits) },
    hostIdleShare: +(device.hostMsBetweenSubmits / wallMs).toFixed(3),
    stats: { ...stats, waitMs: Math.round(stats.waitMs), kernelMs: Object.fromEntries(Object.entries(stats.kernelMs).map(([k, v]) => [k, +v.toFixed(1)])) },
    histogramUpdatesPerSecond: histMs > 0 ? Math.round((stats.histogramUpdates / histMs) * 1000) : null,
    kernelBusyShare: profile ? +(kernelTotalMs / wallMs).toFixed(3) : null,
    parityWithCpu: parity,
  }),
)
disposeGbdtData(gpu, gd)
gpu.release()
