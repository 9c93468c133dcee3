/// <reference types="@webgpu/types" />
// N fused MLPs on the device (FusedMlp's math, mlp-kernels.ts's WGSL): parameters, gradients and
// Adam state in flat buffers of the shared layout, every bind group made once. A step is 4
// dispatches (one hidden layer) or 3 + 3·(L−1); an epoch is a few submits with no host write or
// readback in between (README.md, "An epoch"). A classifier's output layer has its objective's
// units and loss; its evaluation reads its logits back, a chunk of rows at a time.
import type { WorkloadTask } from '@shared/contract'
import { formatBytes } from '@shared/format'
import { initialParams, paramShapes } from '../mlp/fused-layout'
import type { ProgramState } from '../mlp/early-stopping'
import { OBJECTIVE_CODE, objectiveOf, outputUnits } from '../mlp/objective'
import type { WgslDevice } from '../webgpu/device'
import { USAGE } from '../webgpu/device'
import {
  adam,
  backpropHidden,
  backpropLast,
  type Binding,
  CALL_BYTES,
  firstLayer,
  firstLayerGradient,
  hiddenGradient,
  hiddenLayer,
  type KernelSource,
  lastHiddenGradient,
  MAX_OUTPUTS,
  MAX_SEGMENTS,
  OUTPUT_MODE,
  outputLayer,
  singleLayerGradient,
  STEP_RECORD_BYTES,
} from './mlp-kernels'

/** The training rows on the device, once per worker: X with its ones column, y, and the epoch order. */
export interface DeviceRows {
  rows: number
  x: GPUBuffer
  y: GPUBuffer
  /** training: the epoch's order (written per epoch); evaluation: 0, 1, … rows−1 */
  order: GPUBuffer
}

export interface WgslMlpShape {
  n: number
  features: number
  hidden: readonly number[]
  /** rows of the widest training step */
  batchRows: number
  /** training rows (order buffer, steps per epoch) */
  trainRows: number
  /** what the models learn; absent: regression */
  task?: WorkloadTask
}

/**
 * The n models' parameters (and their gradients and Adam moments) are one storage binding each, so
 * they must fit the device's binding limit. Said before anything is allocated, with what helps:
 * fewer models per worker when one model fits, smaller hidden layers when one model alone does not
 * (then no model or row count can help). Null when they fit.
 */
export function paramsBindingProblem(
  paramsPerModel: number,
  n: number,
  features: number,
  hidden: readonly number[],
  outputs: number,
  bindingBytes: number,
): string | null {
  const perModel = paramsPerModel * 4
  if (perModel * n <= bindingBytes) return null
  const shape = [features, ...hidden, outputs].join('→')
  const limit = `one storage binding on this device (${formatBytes(bindingBytes)})`
  if (perModel > bindingBytes)
    return `webgpu: the parameters of one ${shape} model take ${formatBytes(perModel)}, more than ${limit}, at any model or row count: use smaller hidden layers, or another backend`
  const most = Math.floor(bindingBytes / perModel)
  return `webgpu: the parameters of ${n} ${shape} models take ${formatBytes(perModel * n)}, more than ${limit}: at most ${most} models of this shape fit one worker; use fewer models per worker (more workers)`
}

export interface AdamConstants {
  beta1: number
  beta2: number
  epsilon: number
}

/** Rows evaluated per pass, bounded so n·H activations stay small (FusedMlp's bound). */
const EVAL_ELEMENTS_PER_CHUNK = 8 * 1024 * 1024
const COMPUTE = 0x4
const STORAGE = USAGE.STORAGE | USAGE.COPY_DST | USAGE.COPY_SRC

interface Dispatch {
  kernel: KernelSource
  group: GPUBindGroup
  /** workgroups in x, y, z for a step of `rows` rows */
  grid: (rows: number) => [number, number, number]
}

const tiles = (size: number) => Math.max(1, Math.ceil(size / 64))

export class WgslMlp {
  readonly n: number
  readonly hidden: readonly number[]
  readonly evalRows: number
  readonly stepsPerEpoch: number
  /** units of the output layer (K for multiclass, else 1) */
  readonly outputs: number
  private readonly L: number
  private readonly F1: number
  /** offsets (in floats) of each fused parameter in the flat buffers, and their sizes */
  private readonly offsets: number[]
  private readonly sizes: number[]
  readonly totalParams: number
  private readonly buffers: GPUBuffer[] = []
  private readonly params: GPUBuffer
  private readonly grads: GPUBuffer
  private readonly adamM: GPUBuffer
  private readonly adamV: GPUBuffer
  private readonly z: GPUBuffer[]
  private readonly dz: GPUBuffer[]
  private readonly dpred: GPUBuffer
  private readonly lossSum: GPUBuffer
  private readonly sse: GPUBuffer
  private readonly folds: GPUBuffer
  private readonly scalars: GPUBuffer
  private readonly steps: GPUBuffer
  private evalSteps: GPUBuffer | null = null
  private evalStepsCapacity = 0
  private readonly staging: GPUBuffer
  private readonly lossStaging: GPUBuffer
  /** a classifier's logits of one evaluation chunk [evalRows, n, K], and where they are read from; null for a regressor */
  private readonly logitsOut: { buffer: GPUBuffer; staging: GPUBuffer } | null
  private readonly calls = new Map<string, GPUBuffer>()
  private readonly stepStride: number
  private readonly trainDispatches: Dispatch[]
  private readonly evalDispatches = new Map<DeviceRows, Dispatch[]>()
  private adamStep = 0

  constructor(
    private readonly dev: WgslDevice,
    readonly shape: WgslMlpShape,
    private readonly train: DeviceRows,
    private readonly constants: AdamConstants,
  ) {
    const { n, features, hidden, batchRows, trainRows } = shape
    this.n = n
    this.outputs = outputUnits(shape.task)
    if (this.outputs > MAX_OUTPUTS) throw new RangeError(`webgpu: ${this.outputs} output units are more than the engine's ${MAX_OUTPUTS}`)
    this.hidden = [...hidden]
    this.L = hidden.length
    this.F1 = features + 1
    this.stepsPerEpoch = Math.ceil(trainRows / batchRows)
    const widest = Math.max(...hidden)
    this.evalRows = Math.max(batchRows, Math.floor(EVAL_ELEMENTS_PER_CHUNK / (n * widest)))
    const rowsMax = this.evalRows
    this.sizes = paramShapes(features, hidden, n, this.outputs).map((s) => s.reduce((a, b) => a * b, 1))
    this.offsets = []
    let at = 0
    for (const size of this.sizes) {
      this.offsets.push(at)
      at += size
    }
    this.totalParams = at
    const tooLarge = paramsBindingProblem(at / n, n, features, hidden, this.outputs, dev.limits.maxStorageBufferBindingSize)
    if (tooLarge) throw new RangeError(tooLarge)
    const f32 = (count: number, label: string, usage = STORAGE) => this.buffer(count * 4, usage, label)
    this.params = f32(at, 'mlp.params')
    this.grads = f32(at, 'mlp.grads')
    this.adamM = f32(at, 'mlp.adamM')
    this.adamV = f32(at, 'mlp.adamV')
    this.z = hidden.map((h, k) => f32(rowsMax * n * h, `mlp.z${k + 1}`))
    this.dz = hidden.slice(0, -1).map((h, k) => f32(batchRows * n * h, `mlp.dz${k + 1}`))
    this.dpred = f32(batchRows * n * this.outputs, 'mlp.dpred')
    this.lossSum = f32(n, 'mlp.lossSum')
    this.sse = f32(n, 'mlp.sse')
    this.folds = this.buffer(2 * n * 4, STORAGE, 'mlp.folds')
    this.scalars = f32(this.stepsPerEpoch * (n + 1), 'mlp.scalars')
    this.stepStride = Math.max(STEP_RECORD_BYTES, dev.limits.minUniformBufferOffsetAlignment)
    this.steps = this.buffer(this.stepsPerEpoch * this.stepStride, USAGE.UNIFORM | USAGE.COPY_DST, 'mlp.steps')
    this.staging = this.buffer(at * 4, USAGE.MAP_READ | USAGE.COPY_DST, 'mlp.staging')
    this.lossStaging = this.buffer(n * 4, USAGE.MAP_READ | USAGE.COPY_DST, 'mlp.lossStaging')
    const logitBytes = rowsMax * n * this.outputs * 4
    this.logitsOut = shape.task
      ? { buffer: this.buffer(logitBytes, STORAGE, 'mlp.logits'), staging: this.buffer(logitBytes, USAGE.MAP_READ | USAGE.COPY_DST, 'mlp.logitsStaging') }
      : null
    this.writeCalls()
    this.trainDispatches = this.dispatches(this.steps, train, this.lossSum, true)
  }

  private buffer(bytes: number, usage: number, label: string): GPUBuffer {
    const b = this.dev.createBuffer(bytes, usage, label)
    this.buffers.push(b)
    return b
  }

  /** The static per-dispatch uniforms: shapes, offsets, the Adam segments and constants. */
  private writeCalls(): void {
    const { n, hidden, L, F1, offsets } = this
    const hl = hidden[L - 1]
    const base = { n, f1: F1, hl, offWo: offsets[2 * L - 1], offBo: offsets[2 * L] }
    const K = this.outputs
    const put = (name: string, fields: Partial<Record<'hin' | 'hout' | 'offW' | 'offB' | 'mode', number>>) => {
      const data = new ArrayBuffer(CALL_BYTES)
      const u = new Uint32Array(data)
      const f = new Float32Array(data)
      u.set([base.n, base.f1, fields.hin ?? 0, fields.hout ?? 0, fields.offW ?? 0, fields.offB ?? 0, base.offWo, base.offBo, base.hl, fields.mode ?? 0])
      // after the Adam constants: the objective and the output units (every kernel that reads the output layer)
      u.set([OBJECTIVE_CODE[objectiveOf(this.shape.task)], K], 12 + 4 * MAX_SEGMENTS + 5)
      if (name === 'adam') {
        // segments: (start, divisor) — an element's model is ((e − start) / divisor) mod n
        const divisors = [hidden[0], ...hidden.slice(1).flatMap((h, k) => [hidden[k] * h, h]), hl * K, K]
        if (divisors.length > MAX_SEGMENTS)
          throw new RangeError(`webgpu: ${L} hidden layers are more than the engine's ${MAX_SEGMENTS} parameter segments allow`)
        u[10] = divisors.length
        u[11] = this.totalParams
        divisors.forEach((d, s) => u.set([offsets[s], d], 12 + 4 * s))
        const { beta1, beta2, epsilon } = this.constants
        f.set([beta1, 1 - beta1, beta2, 1 - beta2, epsilon], 12 + 4 * MAX_SEGMENTS)
      }
      const buffer = this.buffer(CALL_BYTES, USAGE.UNIFORM | USAGE.COPY_DST, `mlp.call.${name}`)
      this.dev.device.queue.writeBuffer(buffer, 0, data)
      this.calls.set(name, buffer)
    }
    put('first', { hout: hidden[0] })
    for (let k = 1; k < L; k++) put(`layer${k + 1}`, { hin: hidden[k - 1], hout: hidden[k], offW: offsets[2 * k - 1], offB: offsets[2 * k] })
    put('output', { mode: OUTPUT_MODE.train })
    put('evaluate', { mode: this.logitsOut ? OUTPUT_MODE.logits : OUTPUT_MODE.sse })
    put('adam', {})
  }

  private kernel(source: KernelSource): { pipeline: GPUComputePipeline; layout: GPUBindGroupLayout } {
    return this.dev.explicitPipeline(
      source.key,
      source.code,
      source.bindings.map((b, i) => layoutEntry(b, i)),
    )
  }

  private group(source: KernelSource, buffers: Record<string, GPUBuffer>): GPUBindGroup {
    const { layout } = this.kernel(source)
    return this.dev.device.createBindGroup({
      layout,
      entries: source.bindings.map((b, i) => {
        const buffer = buffers[b.name]
        if (!buffer) throw new Error(`webgpu: kernel ${source.key} has no buffer for ${b.name}`)
        return { binding: i, resource: b.kind === 'step' ? { buffer, size: STEP_RECORD_BYTES } : { buffer } }
      }),
    })
  }

  /** The dispatches of one training step (train) or one evaluation pass, their bind groups made once. */
  private dispatches(steps: GPUBuffer, rows: DeviceRows, acc: GPUBuffer, train: boolean): Dispatch[] {
    const { n, hidden, L, F1, z, dz } = this
    const call = (name: string) => this.calls.get(name)!
    const common = { step: steps, params: this.params, dpred: this.dpred, grads: this.grads }
    const out: Dispatch[] = []
    const h1 = hidden[0]
    out.push({
      kernel: firstLayer,
      group: this.group(firstLayer, { ...common, call: call('first'), x: rows.x, order: rows.order, zOut: z[0] }),
      grid: (r) => [tiles(n * h1), tiles(r), 1],
    })
    for (let k = 1; k < L; k++) {
      const g = this.group(hiddenLayer, { ...common, call: call(`layer${k + 1}`), zPrev: z[k - 1], zOut: z[k] })
      out.push({ kernel: hiddenLayer, group: g, grid: (r) => [tiles(hidden[k]), tiles(r), n] })
    }
    const last = z[L - 1]
    out.push({
      kernel: outputLayer,
      group: this.group(outputLayer, {
        ...common,
        call: call(train ? 'output' : 'evaluate'),
        zLast: last,
        y: rows.y,
        order: rows.order,
        acc,
        folds: this.folds,
      }),
      grid: () => [n, 1, 1],
    })
    if (!train) return out
    for (let k = L - 1; k >= 1; k--) {
      const isLast = k === L - 1
      const layer = { ...common, call: call(`layer${k + 1}`), zPrev: z[k - 1], zLast: last, dz: dz[k] ?? last }
      const grad = isLast ? lastHiddenGradient : hiddenGradient
      out.push({ kernel: grad, group: this.group(grad, layer), grid: () => [tiles(hidden[k]), tiles(hidden[k - 1] + 1), n] })
      const back = isLast ? backpropLast : backpropHidden
      out.push({ kernel: back, group: this.group(back, { ...layer, dzOut: dz[k - 1] }), grid: (r) => [tiles(hidden[k - 1]), tiles(r), n] })
    }
    const first = L === 1 ? singleLayerGradient : firstLayerGradient
    out.push({
      kernel: first,
      group: this.group(first, { ...common, call: call('first'), x: rows.x, order: rows.order, zLast: last, dz: dz[0] ?? last }),
      grid: () => [tiles(n * h1), tiles(F1), 1],
    })
    const groupsX = Math.min(Math.ceil(this.totalParams / 256), this.dev.limits.maxComputeWorkgroupsPerDimension)
    const groupsY = Math.ceil(Math.ceil(this.totalParams / 256) / groupsX)
    out.push({
      kernel: adam,
      group: this.group(adam, { ...common, call: call('adam'), adamM: this.adamM, adamV: this.adamV, scalars: this.scalars }),
      grid: () => [groupsX, groupsY, 1],
    })
    return out
  }

  /**
   * Starts training anew: each model's initial weights (from its seed), Adam state zero, its held-out
   * rows; or, given `start`, from that state (a compacted program's survivors, early stopping's kept models).
   */
  reset(seeds: readonly number[], heldOut: readonly ({ begin: number; end: number } | null)[] | null, start?: ProgramState): void {
    if (seeds.length !== this.n) throw new Error(`webgpu: ${seeds.length} seeds for ${this.n} fused models`)
    const { queue } = this.dev.device
    const write = (buffer: GPUBuffer, values: readonly Float32Array[], what: string) => {
      if (values.length !== this.sizes.length) throw new RangeError(`webgpu: start: ${values.length} ${what}, the layout has ${this.sizes.length}`)
      values.forEach((v, s) => {
        if (v.length !== this.sizes[s])
          throw new RangeError(`webgpu: start: ${what} ${s} holds ${v.length} values, the layout of ${this.n} models ${this.sizes[s]}`)
        queue.writeBuffer(buffer, this.offsets[s] * 4, v)
      })
    }
    write(this.params, start?.values ?? initialParams(this.shape.features, this.hidden, seeds, this.outputs), 'parameters')
    if (start?.adam) {
      write(this.adamM, start.adam.m, "Adam's first moments")
      write(this.adamV, start.adam.v, "Adam's second moments")
    } else {
      const zeros = new Float32Array(this.totalParams)
      queue.writeBuffer(this.adamM, 0, zeros)
      queue.writeBuffer(this.adamV, 0, zeros)
    }
    const folds = new Uint32Array(2 * this.n)
    heldOut?.forEach((h, i) => h && folds.set([h.begin, h.end], 2 * i))
    queue.writeBuffer(this.folds, 0, folds)
    this.adamStep = start?.adam?.step ?? 0
  }

  /**
   * Writes one epoch's order, step records and Adam scalars (queue writes, ordered after the work
   * already submitted). lr: one per model. Returns each step's row count.
   */
  beginEpoch(order: Int32Array, lr: readonly number[]): number[] {
    const { n, stepsPerEpoch } = this
    const { batchRows, trainRows } = this.shape
    const { queue } = this.dev.device
    queue.writeBuffer(this.train.order, 0, new Uint32Array(order.buffer, order.byteOffset, order.length))
    const records = new ArrayBuffer(stepsPerEpoch * this.stepStride)
    const scalars = new Float32Array(stepsPerEpoch * (n + 1))
    const rows: number[] = []
    const { beta1, beta2 } = this.constants
    for (let s = 0; s < stepsPerEpoch; s++) {
      const start = s * batchRows
      const r = Math.min(batchRows, trainRows - start)
      rows.push(r)
      new Uint32Array(records, s * this.stepStride, 3).set([start, r, s])
      new Float32Array(records, s * this.stepStride + 12, 1)[0] = 2 / r
      const t = ++this.adamStep
      const c1 = 1 - beta1 ** t
      for (let i = 0; i < n; i++) scalars[s * (n + 1) + i] = lr[i] / c1
      scalars[s * (n + 1) + n] = 1 - beta2 ** t
    }
    queue.writeBuffer(this.steps, 0, records)
    queue.writeBuffer(this.scalars, 0, scalars)
    return rows
  }

  /** Encodes steps [from, to) of the epoch begun last (the first of an epoch clears its loss sum). */
  encodeSteps(encoder: GPUCommandEncoder, from: number, to: number, rows: readonly number[]): void {
    if (from === 0) encoder.clearBuffer(this.lossSum)
    const pass = encoder.beginComputePass()
    for (let s = from; s < to; s++) this.encodeDispatches(pass, this.trainDispatches, s * this.stepStride, rows[s])
    pass.end()
  }

  private encodeDispatches(pass: GPUComputePassEncoder, dispatches: readonly Dispatch[], offset: number, rows: number): void {
    for (const d of dispatches) {
      pass.setPipeline(this.kernel(d.kernel).pipeline)
      pass.setBindGroup(0, d.group, [offset])
      const [x, y, z] = d.grid(rows)
      pass.dispatchWorkgroups(x, y, z)
    }
    this.dev.work.dispatched(dispatches.length)
  }

  /** Copies the epoch's summed loss (Σ err² over each model's trained rows) for readLoss(). */
  encodeLossCopy(encoder: GPUCommandEncoder): void {
    encoder.copyBufferToBuffer(this.lossSum, 0, this.lossStaging, 0, this.n * 4)
  }

  /** Reads the copied loss sums: the epoch's one readback. */
  async readLoss(): Promise<Float32Array> {
    return new Float32Array(await this.dev.read(this.lossStaging, this.n * 4))
  }

  /** The evaluation dispatches of a set (bind groups made once per set) and its chunk records written: its chunks of evalRows rows. */
  private evaluationOf(set: DeviceRows): { dispatches: Dispatch[]; chunks: number } {
    const { evalRows } = this
    const chunks = Math.ceil(set.rows / evalRows)
    if (chunks > this.evalStepsCapacity) {
      // a larger set than any before: the eval records' buffer (and the groups bound to it) anew
      if (this.evalSteps) this.dev.destroyBuffer(this.evalSteps)
      this.evalSteps = this.dev.createBuffer(chunks * this.stepStride, USAGE.UNIFORM | USAGE.COPY_DST, 'mlp.evalSteps')
      this.evalStepsCapacity = chunks
      this.evalDispatches.clear()
    }
    const records = new ArrayBuffer(chunks * this.stepStride)
    for (let c = 0; c < chunks; c++) new Uint32Array(records, c * this.stepStride, 3).set([c * evalRows, Math.min(evalRows, set.rows - c * evalRows), c])
    this.dev.device.queue.writeBuffer(this.evalSteps!, 0, records)
    let dispatches = this.evalDispatches.get(set)
    if (!dispatches) {
      dispatches = this.dispatches(this.evalSteps!, set, this.logitsOut?.buffer ?? this.sse, false)
      this.evalDispatches.set(set, dispatches)
    }
    return { dispatches, chunks }
  }

  /** A regressor: each model's mean squared error on a set of rows, summed on the device and read once. */
  async evaluate(set: DeviceRows): Promise<Float64Array> {
    if (this.logitsOut) throw new Error('webgpu: a classifier is evaluated by its logits')
    const { n, evalRows } = this
    const { dispatches, chunks } = this.evaluationOf(set)
    const encoder = this.dev.device.createCommandEncoder()
    encoder.clearBuffer(this.sse)
    const pass = encoder.beginComputePass()
    for (let c = 0; c < chunks; c++) this.encodeDispatches(pass, dispatches, c * this.stepStride, Math.min(evalRows, set.rows - c * evalRows))
    pass.end()
    encoder.copyBufferToBuffer(this.sse, 0, this.staging, 0, n * 4)
    this.dev.submit([encoder.finish()])
    const sums = new Float32Array(await this.dev.read(this.staging, n * 4))
    return Float64Array.from(sums, (s) => s / set.rows)
  }

  /** A classifier's logits on a set of rows, rows first ([rows, n·K]): one submit and one readback per chunk of evalRows rows. */
  async logits(set: DeviceRows): Promise<Float32Array> {
    if (!this.logitsOut) throw new Error('webgpu: a regressor is evaluated by its MSE')
    const { n, evalRows, outputs } = this
    const { buffer, staging } = this.logitsOut
    const { dispatches, chunks } = this.evaluationOf(set)
    const out = new Float32Array(set.rows * n * outputs)
    for (let c = 0; c < chunks; c++) {
      const size = Math.min(evalRows, set.rows - c * evalRows)
      const bytes = size * n * outputs * 4
      const encoder = this.dev.device.createCommandEncoder()
      const pass = encoder.beginComputePass()
      this.encodeDispatches(pass, dispatches, c * this.stepStride, size)
      pass.end()
      encoder.copyBufferToBuffer(buffer, 0, staging, 0, bytes)
      this.dev.submit([encoder.finish()])
      out.set(new Float32Array(await this.dev.read(staging, bytes)), c * evalRows * n * outputs)
    }
    return out
  }

  /** Forgets the bind groups of an evaluation set that is about to be destroyed. */
  forget(set: DeviceRows): void {
    this.evalDispatches.delete(set)
  }

  /** The trained parameters in the fused layout (mlp/artifact.ts reads each model out of it). */
  async parameters(): Promise<Float32Array[]> {
    return this.read(this.params)
  }

  /** The training state (parameters, Adam's moments and step) in the fused layout, read to the host. */
  async state(): Promise<Required<ProgramState>> {
    // one after another: they share the staging buffer
    const values = await this.read(this.params)
    const m = await this.read(this.adamM)
    const v = await this.read(this.adamV)
    return { values, adam: { m, v, step: this.adamStep } }
  }

  /** A flat parameter-shaped buffer read back, split into the fused layout's tensors. */
  private async read(buffer: GPUBuffer): Promise<Float32Array[]> {
    const encoder = this.dev.device.createCommandEncoder()
    encoder.copyBufferToBuffer(buffer, 0, this.staging, 0, this.totalParams * 4)
    this.dev.submit([encoder.finish()])
    const all = new Float32Array(await this.dev.read(this.staging, this.totalParams * 4))
    return this.offsets.map((o, s) => all.slice(o, o + this.sizes[s]))
  }

  destroy(): void {
    for (const b of this.buffers) this.dev.destroyBuffer(b)
    if (this.evalSteps) this.dev.destroyBuffer(this.evalSteps)
    this.buffers.length = 0
    this.evalDispatches.clear()
  }
}

function layoutEntry(b: Binding, i: number): GPUBindGroupLayoutEntry {
  const type: GPUBufferBindingType = b.kind === 'step' || b.kind === 'uniform' ? 'uniform' : b.kind === 'read' ? 'read-only-storage' : 'storage'
  return { binding: i, visibility: COMPUTE, buffer: { type, hasDynamicOffset: b.kind === 'step' } }
}
