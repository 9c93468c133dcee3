// How a group of models is split into chunks that fit the device: a chunk's histograms live in one
// storage buffer that must fit the device's limits and the engine's histogram budget, and so must
// the per-row state and the level tables. Every model gets the node slots of the group's widest; a
// model that alone does not fit gets fewer, its wide levels built in slices (README.md, "Chunks").
import { type GbdtParams, HISTOGRAM_BUDGET_BYTES, nodeHistogramsAtLevel } from '@shared/families/gbdt'
import type { WgslLimits } from '../webgpu/device'
import { CNT_WORDS, DEC_WORDS, hessianWords } from './tree-kernels'

/** Bytes of one histogram slot: Σq as two u32 words and the row count, and with per-row hessians (a classifier's) Σqh as two more. */
export function slotBytes(hessians: boolean): number {
  return 4 * hessianWords(hessians).slot
}
/** The most tree nodes (2^(depth+1) − 1) for which a round is planned on the device: its trees are what a round reads back. */
export const MAX_DEVICE_TREE_NODES = 4095

/** The level tables' sizes per model (tree-kernels.ts, tabs): nodes of a level, evaluated nodes and builds of a level, tree nodes. */
export interface TableSizes {
  nl: number
  ne: number
  nb: number
  T: number
}

/** The level tables a model needs: for device-planned rounds, every level's nodes and its tree; host-planned ones grow them as levels need. */
export function tableSizes(nodeSlots: number, maxDepth: number, rows: number, devicePlanned: boolean): TableSizes {
  const tree = Math.min(2 ** (maxDepth + 1) - 1, 2 * rows - 1)
  return {
    nl: Math.max(1, Math.min(2 ** maxDepth, 2 * nodeSlots, rows)),
    ne: nodeSlots,
    nb: nodeSlots,
    T: devicePlanned ? tree : 1,
  }
}

/** Bytes of one model's level tables (a classifier's nodes, choices and tree records carry their hessian sums too). */
export function tableBytes(s: TableSizes, nodeSlots: number, hessians = false): number {
  const { nl, ne, nb, T } = s
  const w = hessianWords(hessians)
  return 4 * (CNT_WORDS + 2 * nl * w.lvl + 3 * nb + ne + nl * DEC_WORDS + nl * w.choice + nodeSlots + nb + T * w.tree)
}

export interface ChunkPlanInput {
  models: number
  /** training rows */
  rows: number
  /** rows of the per-row state: the training rows and the test rows after them (default: rows) */
  deviceRows?: number
  /** histogram slots of one node: the widest `featuresPerTree` features (bins + missing slot) */
  slotsPerNode: number
  /** each model's (or each distinct configuration's) depth and min_child_weight: the widest sizes the node slots */
  trees: readonly Pick<GbdtParams, 'maxDepth' | 'minChildWeight'>[]
  limits: Pick<WgslLimits, 'maxStorageBufferBindingSize' | 'maxBufferSize'>
  /** default: the family's HISTOGRAM_BUDGET_BYTES, as the CPU engine's */
  histogramBudgetBytes?: number
  /** features the widest model samples per tree */
  perTree: number
  /** per-row hessians (a classifier): histogram slots of slotBytes(true) */
  hessians?: boolean
  /** trees a model grows a round, side by side (multiclass: K, one device model each; a chunk holds whole models) */
  treesPerModel?: number
}

export interface ChunkPlan {
  /** device models per dispatch (the last chunk may have fewer): whole models × their trees a round */
  modelsPerChunk: number
  chunks: number
  /** node histograms each model may hold at once */
  nodeSlots: number
  /** node histograms a model needs at its widest level (nodeSlots < this: sliced levels) */
  nodeSlotsWanted: number
  /** bytes of the chunk's histogram buffer */
  histogramBytes: number
  /** the cap the histogram buffer had to fit: min(binding size, buffer size, budget) */
  histogramLimitBytes: number
  /** rounds can be planned on the device: no sliced levels, and trees small enough to read back */
  devicePlanned: boolean
  /** the level tables' sizes per model */
  tables: TableSizes
}

/**
 * Node histograms a model holds at once at its widest level. Unlike the CPU engine (whose last
 * evaluated level builds in scratch), the device keeps the last evaluated level's histograms
 * (maxDepth − 1) for its split filter, so that level is the widest.
 */
export function nodeSlotsWanted(rows: number, maxDepth: number, minChildWeight: number): number {
  return nodeHistogramsAtLevel(Math.max(0, maxDepth - 1), rows, minChildWeight)
}

/** The chunk's histogram buffer cap (min of the binding size, buffer size and budget), and one node histogram's bytes. */
function histogramLimits(input: ChunkPlanInput): { limit: number; perNode: number } {
  const budget = input.histogramBudgetBytes ?? HISTOGRAM_BUDGET_BYTES
  const { limits } = input
  const limit = Math.floor(Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize, budget) / 4) * 4
  return { limit, perNode: input.slotsPerNode * slotBytes(input.hessians ?? false) }
}

/** Whether a chunk can hold one model: a node histogram for each of its trees a round (a K-class model's K trees share a chunk: its gradient reads every class's margins). */
export function holdsOneModel(input: ChunkPlanInput): boolean {
  const { limit, perNode } = histogramLimits(input)
  return (input.treesPerModel ?? 1) * perNode <= limit
}

export function planChunks(input: ChunkPlanInput): ChunkPlan {
  const { models, rows, limits } = input
  if (models < 1) throw new RangeError('planChunks: no models')
  const hessians = input.hessians ?? false
  const K = input.treesPerModel ?? 1
  const { limit, perNode } = histogramLimits(input)
  if (!holdsOneModel(input)) {
    throw new RangeError(
      `webgpu: ${K === 1 ? 'one node histogram needs' : `one node histogram for each of a model's ${K} trees needs`} ${K * perNode} bytes, more than the ${limit} bytes a storage buffer may hold here`,
    )
  }
  const wanted = Math.max(...input.trees.map((t) => nodeSlotsWanted(rows, t.maxDepth, t.minChildWeight)))
  let nodeSlots = wanted
  let perChunk: number
  if (K * wanted * perNode <= limit) {
    perChunk = Math.floor(limit / (wanted * perNode))
  } else {
    nodeSlots = Math.floor(limit / (K * perNode))
    perChunk = K
  }
  const maxDepth = Math.max(...input.trees.map((t) => t.maxDepth))
  const devicePlanned = nodeSlots === wanted && 2 ** (maxDepth + 1) - 1 <= MAX_DEVICE_TREE_NODES
  const tables = tableSizes(nodeSlots, maxDepth, rows, devicePlanned)
  // per-row state: one f32/i32/u32 per model and row in one binding each; the level tables in one binding
  const deviceRows = input.deviceRows ?? rows
  perChunk = Math.min(perChunk, Math.floor(limits.maxStorageBufferBindingSize / (4 * deviceRows)))
  perChunk = Math.min(perChunk, Math.floor(limits.maxStorageBufferBindingSize / tableBytes(tables, nodeSlots, hessians)))
  if (perChunk < 1) throw new RangeError(`webgpu: ${deviceRows} rows of one model do not fit a storage buffer of ${limits.maxStorageBufferBindingSize} bytes`)
  // a K-class model's K trees share a chunk (its gradient reads every class's margins)
  const wholePerChunk = Math.floor(perChunk / K)
  if (wholePerChunk < 1) throw new RangeError(`webgpu: the ${K} trees of one model (one per class) do not fit one chunk of ${perChunk} trees here`)
  const chunks = Math.ceil(models / Math.min(models, wholePerChunk))
  // balanced chunks: 50 models with room for 16 → 4 chunks of 13/13/12/12, not 16/16/16/2
  const modelsPerChunk = Math.ceil(models / chunks) * K
  return {
    modelsPerChunk,
    chunks,
    nodeSlots,
    nodeSlotsWanted: wanted,
    histogramBytes: modelsPerChunk * nodeSlots * perNode,
    histogramLimitBytes: limit,
    devicePlanned,
    tables,
  }
}

/** One line for people: "4 chunks of ≤ 13 models (32 node histograms each, 96 MiB of 128 MiB)". */
export function describeChunks(p: ChunkPlan): string {
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(b < 2 ** 20 ? 2 : 0)} MiB`
  const sliced = p.nodeSlots < p.nodeSlotsWanted ? `, sliced levels (${p.nodeSlots} of ${p.nodeSlotsWanted} node histograms)` : ''
  const planned = p.devicePlanned ? ', rounds planned on the device' : ', levels planned by the host'
  return `${p.chunks} chunk${p.chunks === 1 ? '' : 's'} of ≤ ${p.modelsPerChunk} model${p.modelsPerChunk === 1 ? '' : 's'} (${p.nodeSlots} node histograms each, ${mib(p.histogramBytes)} of ${mib(p.histogramLimitBytes)})${sliced}${planned}`
}
