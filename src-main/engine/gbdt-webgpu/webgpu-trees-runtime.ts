// The `webgpu` backend of the gbdt family, as its worker half sees it: a runtime (the device, its
// limits and the chunking rule as flags, live GPU buffers as memory), the data (binned on the host
// as for the CPU engine, uploaded once per worker), and training: sequential/pool = one model per
// dispatch, batched = all of the job's models per dispatch (chunked to fit the device).
import { modelSeed, type Workload } from '@shared/contract'
import { type GbdtParams as FamilyGbdtParams, HISTOGRAM_BUDGET_BYTES } from '@shared/families/gbdt'
import type { Dataset } from '../datasets/generated'
import { type GroupTrainer, heldOutRowsOf, perModelParams, resumedTreesOf, trainTreesAndReport } from '../trees/gbdt-report'
import type { TrainHooks, TrainOptions, WorkerRuntime } from '../backend/types'
import { prepareGbdtData, type GbdtData } from '../gbdt'
import { packageVersion } from '../machine'
import { disposeGbdtData, type GpuGbdtData, uploadGbdtData } from './device-data'
import { openWgslDevice, type WgslDevice } from '../webgpu/device'
import { trainGbdtGroupWebgpu } from './trainer'

export interface WebgpuGbdtRuntime extends WorkerRuntime {
  backend: 'webgpu'
  gbdtGpu: WgslDevice
}

export function isWebgpuGbdtRuntime(rt: WorkerRuntime): rt is WebgpuGbdtRuntime {
  return rt.backend === 'webgpu' && 'gbdtGpu' in rt
}

/** Opens the device; throws with the reason (the worker reports init-failed) when there is none. */
export async function startWebgpuGbdtRuntime(): Promise<WebgpuGbdtRuntime> {
  const gpu: WgslDevice = await openWgslDevice('trainpool-gbdt')
  const l = gpu.limits
  return {
    backend: 'webgpu',
    hardware: gpu.hardware,
    device: gpu.description,
    gbdtGpu: gpu,
    flags: {
      engine: 'webgpu-wgsl',
      hardware: gpu.hardware,
      histograms:
        'integer: workgroup memory where the built nodes fit (32-bit slots where exact: ≤ 1024 rows a workgroup; else 64-bit Σq with a carry), 64-bit global sums; global atomics beyond',
      splitDecision:
        'device: bracketed float32 gains, then the exact losses of the contenders (the CPU engine float32 arithmetic on integer mantissas) and its tie rules; host: whole histograms where a model-round could overflow float32 or α·2^k is not an integer',
      objectives:
        "reg:squarederror (the row count as the hessian), binary:logistic and multi:softprob (each row's gradient and hessian from its margins on the device, bit for bit the CPU engine's; hessians quantised per tree, 64-bit sums; K trees a round for K classes)",
      levelPlan: 'device: whole rounds (one submit and one read-back of the trees a round); host: levels too wide for the node slots (one read-back a pass)',
      chunking:
        "models per dispatch = ⌊min(maxStorageBufferBindingSize, maxBufferSize, histogram budget) / (node histograms per model × slots × 12 B, 20 B with a classifier's hessians; a K-class model's K trees in one chunk)⌋ for the group's deepest and widest model, balanced; two chunks at once where a group needs several and half the budget each keeps the plan; sequential and pool: 1",
      histogramBudgetBytes: HISTOGRAM_BUDGET_BYTES,
      maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
      maxBufferSize: l.maxBufferSize,
      maxComputeWorkgroupStorageSize: l.maxComputeWorkgroupStorageSize,
      maxComputeWorkgroupsPerDimension: l.maxComputeWorkgroupsPerDimension,
    },
    versions: { 'trainpool-gbdt': 'xgboost-1.7-hist', webgpu: packageVersion('webgpu') },
    deviceCounters: () => gpu.work.snapshot(),
    memory: () => {
      const s = gpu.bufferStats()
      return { numTensors: s.live, numBytes: s.liveBytes }
    },
    heapBytes: () => null,
    release: () => gpu.release(),
  }
}

export interface WebgpuPrepared {
  engine: 'webgpu'
  dataset: Dataset
  binned: GbdtData
  gpuData: GpuGbdtData
}

type GbdtWorkload = Workload<FamilyGbdtParams>

/**
 * The data set as the CPU engine bins it, and its bins and labels on the device (once per worker),
 * with its test rows after them: the trainer keeps their margins on the device (the report scores those).
 */
export function prepareWebgpu(rt: WebgpuGbdtRuntime, dataset: Dataset, w: GbdtWorkload): WebgpuPrepared {
  const binned = prepareGbdtData(dataset.xTrain, dataset.yTrain, dataset.train, w.features, w.model.maxBin)
  return { engine: 'webgpu', dataset, binned, gpuData: uploadGbdtData(rt.gbdtGpu, binned, { x: dataset.xTest, rows: dataset.test }) }
}

export function disposeWebgpu(rt: WebgpuGbdtRuntime, d: WebgpuPrepared): void {
  disposeGbdtData(rt.gbdtGpu, d.gpuData)
}

/** One round of the job's models, as they will be dispatched, before the clock: compiles the pipelines. */
export async function warmUpWebgpu(rt: WebgpuGbdtRuntime, d: WebgpuPrepared, w: GbdtWorkload, indices: readonly number[]): Promise<void> {
  await trainGbdtGroupWebgpu(
    rt.gbdtGpu,
    d.gpuData,
    { ...w.model, rounds: 1 },
    indices.map((i) => modelSeed(w.seed, i)),
    { task: w.task },
  )
}

export async function trainWebgpu(
  rt: WebgpuGbdtRuntime,
  d: WebgpuPrepared,
  w: GbdtWorkload,
  indices: readonly number[],
  options: TrainOptions,
  hooks: TrainHooks,
): Promise<void> {
  // in a model set, each model's own parameters (the seam groups configurations that differ only in GBDT_PER_MODEL_PARAMS)
  const train: GroupTrainer = (seeds, { onRound, shouldStop, cancelError }, group) =>
    trainGbdtGroupWebgpu(rt.gbdtGpu, d.gpuData, w.model, seeds, {
      onRound,
      shouldStop,
      cancelError,
      perModel: perModelParams(options, group),
      heldOut: heldOutRowsOf(options, group),
      resume: resumedTreesOf(options, group, d.binned, w),
      task: w.task,
      ...(w.earlyStopping ? { earlyStopping: w.earlyStopping } : {}),
    })
  await trainTreesAndReport(train, d.dataset, w, indices, options, hooks)
}
