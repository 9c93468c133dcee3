// Pure derivation of what the three charts draw, from the measurements received so far. Charts,
// HTML data tables and tests all read this, so a point appears as soon as its measurement arrives.
// Backends side by side (issue 25): one series per (backend, strategy, W), the backend in its id and
// label; sequential and the speedups are per backend (against sequential on the same backend).
import type { CostModel, WorkerScaling } from '@shared/contract/advice'
import type { Strategy } from '@shared/contract/config'
import { STRATEGIES } from '@shared/contract/config'
import type { Measurement } from '@shared/contract/result'
import { formatRows } from '@shared/format'

export interface Point {
  x: number
  y: number
}

export interface Series {
  /** stable id, e.g. "pool/W5"; side by side "onnxruntime/pool/W5" */
  id: string
  label: string
  strategy: Strategy
  workers: number | null
  /** backends side by side: the backend this series ran on (absent in a one-backend run) */
  backend?: string
  points: Point[]
}

/** Highlighted points (the best W, a knee): their own legend entry, no line. */
export interface MarkSet {
  label: string
  points: Point[]
  /** default: a green star */
  pointStyle?: 'star' | 'crossRot' | 'rectRot' | 'triangle'
  color?: string
}

export interface LineChartInput {
  title: string
  series: Series[]
  xLabel: string
  yLabel: string
  xLog?: boolean
  /** a logarithmic y axis (yMin is then ignored: a log axis has no 0) */
  yLog?: boolean
  yMin?: number
  /** the series are measured points only, drawn without lines (fitted curves carry the lines) */
  pointsOnly?: boolean
  /** fitted curves drawn as thin lines in their strategy's colour, without points */
  curves?: Series[]
  /** extra highlighted points (e.g. the best worker count), drawn as stars unless a set says otherwise */
  marks?: MarkSet | MarkSet[]
  /** x values are counts (workers): integer ticks */
  integerX?: boolean
  /** a horizontal reference level across the whole x range, drawn dashed with its label on the line */
  reference?: { label: string; y: number } | null
  /** vertical lines across the plot at these x values, each labelled at its top (a halving search's rung cuts) */
  cuts?: { x: number; label: string }[]
  /** false: no legend (too many series to read; the data table names them) */
  legend?: boolean
}

export interface ChartData {
  /** model count the charts show (the largest present unless asked otherwise) */
  models: number | null
  modelCounts: number[]
  /** total time (median ms) vs data size */
  time: Series[]
  /** speedup vs sequential, per data size */
  speedup: Series[]
  /** time vs worker count at `sweepSize`; empty unless several worker counts exist */
  sweep: Series[]
  sweepSize: number | null
  /**
   * sequential's median at `sweepSize`: one worker whatever W is, so the sweep draws it as a labelled
   * horizontal reference line, not as points at each W as if it had run there
   */
  sweepReference: { label: string; y: number } | null
  /** best worker count per strategy (and backend, side by side) in the sweep */
  bestWorkers: { strategy: Strategy; workers: number; ms: number; backend?: string }[]
}

export function median(values: readonly number[]): number {
  if (!values.length) return NaN
  const s = [...values].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

function seriesId(strategy: Strategy, workers: number | null, backend?: string): string {
  const id = workers == null ? strategy : `${strategy}/W${workers}`
  return backend ? `${backend}/${id}` : id
}

function seriesLabel(strategy: Strategy, workers: number | null, backend?: string): string {
  const label = workers == null ? strategy : `${strategy} (W=${workers})`
  return backend ? `${backend} ${label}` : label
}

/** Groups ok measurements of one model count into medians keyed by backend/strategy/W/size. */
function medians(ms: readonly Measurement[]) {
  const groups = new Map<string, { strategy: Strategy; workers: number; size: number; backend?: string; walls: number[] }>()
  for (const m of ms) {
    const k = `${m.backend ?? ''}|${m.strategy}|${m.workers}|${m.size}`
    let g = groups.get(k)
    if (!g) groups.set(k, (g = { strategy: m.strategy, workers: m.workers, size: m.size, ...(m.backend ? { backend: m.backend } : {}), walls: [] }))
    g.walls.push(m.wallMs)
  }
  return [...groups.values()].map((g) => ({ ...g, ms: median(g.walls) }))
}

const strategyOrder = (s: Strategy) => STRATEGIES.indexOf(s)

/** Backends in the order the measurements first name them (the config's order: the plan runs them in turn). */
function backendOrder(ms: readonly { backend?: string }[]): (b: string | undefined) => number {
  const order = [...new Set(ms.map((m) => m.backend ?? ''))]
  return (b) => order.indexOf(b ?? '')
}

function sortSeries(list: Series[], byBackend: (b: string | undefined) => number = () => 0): Series[] {
  for (const s of list) s.points.sort((a, b) => a.x - b.x)
  return list.sort(
    (a, b) => byBackend(a.backend) - byBackend(b.backend) || strategyOrder(a.strategy) - strategyOrder(b.strategy) || (a.workers ?? 0) - (b.workers ?? 0),
  )
}

export function chartSeries(measurements: readonly Measurement[], opts: { models?: number } = {}): ChartData {
  const ok = measurements.filter((m) => m.status === 'ok' && Number.isFinite(m.wallMs))
  const modelCounts = [...new Set(ok.map((m) => m.models))].sort((a, b) => a - b)
  const models = opts.models != null && modelCounts.includes(opts.models) ? opts.models : modelCounts.length ? modelCounts[modelCounts.length - 1] : null
  if (models == null) return { models, modelCounts, time: [], speedup: [], sweep: [], sweepSize: null, sweepReference: null, bestWorkers: [] }
  const meds = medians(ok.filter((m) => m.models === models))
  const byBackend = backendOrder(ok)
  const sequential = sequentialMedians(ok, models)
  const { time, speedup } = timeAndSpeedup(meds, sequential)
  return {
    models,
    modelCounts,
    time: sortSeries(time, byBackend),
    speedup: sortSeries(speedup, byBackend),
    ...workerSweep(meds, sequential, byBackend),
  }
}

type Medians = ReturnType<typeof medians>

/** Sequential runs in one worker whatever W is: one series (per backend), all its measurements pooled per size. */
function sequentialMedians(ok: readonly Measurement[], models: number) {
  const bySize = new Map<string, { backend?: string; size: number; walls: number[] }>()
  for (const m of ok) {
    if (m.models !== models || m.strategy !== 'sequential') continue
    const k = `${m.backend ?? ''}|${m.size}`
    const g = bySize.get(k) ?? { ...(m.backend ? { backend: m.backend } : {}), size: m.size, walls: [] }
    g.walls.push(m.wallMs)
    bySize.set(k, g)
  }
  const medianOf = new Map([...bySize].map(([k, g]) => [k, median(g.walls)]))
  /** sequential's median on a backend at a size */
  const at = (backend: string | undefined, size: number) => medianOf.get(`${backend ?? ''}|${size}`)
  return { groups: [...bySize.values()], at }
}
type SequentialMedians = ReturnType<typeof sequentialMedians>

/** Adds point `p` to the series of (strategy, W, backend) in `map`, making the series on first use. */
function addPoint(map: Map<string, Series>, strategy: Strategy, workers: number | null, backend: string | undefined, p: Point) {
  const id = seriesId(strategy, workers, backend)
  let s = map.get(id)
  if (!s) map.set(id, (s = { id, label: seriesLabel(strategy, workers, backend), strategy, workers, ...(backend ? { backend } : {}), points: [] }))
  s.points.push(p)
}

/** Time against data size per series, and the speedup against sequential on the same backend. */
function timeAndSpeedup(meds: Medians, sequential: SequentialMedians): { time: Series[]; speedup: Series[] } {
  const time = new Map<string, Series>()
  const speedup = new Map<string, Series>()
  for (const g of sequential.groups) addPoint(time, 'sequential', null, g.backend, { x: g.size, y: sequential.at(g.backend, g.size)! })
  for (const g of meds) {
    if (g.strategy === 'sequential') continue
    addPoint(time, g.strategy, g.workers, g.backend, { x: g.size, y: g.ms })
    const seq = sequential.at(g.backend, g.size)
    if (seq != null && g.ms > 0) addPoint(speedup, g.strategy, g.workers, g.backend, { x: g.size, y: seq / g.ms })
  }
  return { time: [...time.values()], speedup: [...speedup.values()] }
}

/** Time against W at one size: only meaningful with two or more worker counts for a parallel strategy. */
function workerSweep(meds: Medians, sequential: SequentialMedians, byBackend: (b: string | undefined) => number) {
  const none = { sweep: [] as Series[], sweepSize: null, sweepReference: null, bestWorkers: [] as ChartData['bestWorkers'] }
  const parallel = meds.filter((g) => g.strategy !== 'sequential')
  if (new Set(parallel.map((g) => g.workers)).size < 2) return none
  // the largest size that has results for at least two worker counts
  const sizes = [...new Set(parallel.map((g) => g.size))].sort((a, b) => b - a)
  const sweepSize = sizes.find((size) => new Set(parallel.filter((g) => g.size === size).map((g) => g.workers)).size >= 2) ?? null
  if (sweepSize == null) return none
  const map = new Map<string, Series>()
  for (const g of parallel) if (g.size === sweepSize) addPoint(map, g.strategy, null, g.backend, { x: g.workers, y: g.ms })
  // side by side the sequential reference is the first backend's (each backend's is in the time chart)
  const seqs = sequential.groups.filter((g) => g.size === sweepSize).sort((a, b) => byBackend(a.backend) - byBackend(b.backend))
  const seq = seqs.length ? sequential.at(seqs[0].backend, sweepSize) : undefined
  const sweepReference = seq != null ? { label: `${seqs[0].backend ? `${seqs[0].backend} ` : ''}sequential (1 worker, reference)`, y: seq } : null
  const sweep = sortSeries([...map.values()], byBackend)
  const bestWorkers: ChartData['bestWorkers'] = []
  for (const s of sweep) {
    if (!s.points.length) continue
    const best = s.points.reduce((a, b) => (b.y < a.y ? b : a))
    bestWorkers.push({ strategy: s.strategy, workers: best.x, ms: best.y, ...(s.backend ? { backend: s.backend } : {}) })
  }
  return { sweep, sweepSize, sweepReference, bestWorkers }
}

/** Distinct visual encodings per strategy: colour AND dash pattern AND point style. */
export const STRATEGY_STYLE: Record<Strategy, { color: string; dash: number[]; point: 'circle' | 'rect' | 'triangle' }> = {
  sequential: { color: '#6b7280', dash: [6, 4], point: 'rect' },
  pool: { color: '#2563eb', dash: [], point: 'circle' },
  batched: { color: '#d97706', dash: [2, 3], point: 'triangle' },
}

/**
 * Backends side by side: the second and later backends of a run draw each strategy in a colour of
 * their own (the first keeps STRATEGY_STYLE's), and a dash of their own, so wasm pool and onnxruntime
 * pool are told apart by colour and line, not only by the legend text.
 */
export const BACKEND_COLORS: Record<Strategy, string[]> = {
  sequential: ['#6b7280', '#0f766e', '#a16207', '#9d174d'],
  pool: ['#2563eb', '#7c3aed', '#0891b2', '#15803d'],
  batched: ['#d97706', '#dc2626', '#db2777', '#65a30d'],
}
export const BACKEND_DASH: number[][] = [[], [10, 3], [3, 3], [12, 3, 3, 3]]

/** The colour of a series: its strategy's, shifted per backend when the run compares backends (nth: the backend's place). */
export function seriesColor(strategy: Strategy, backendIndex: number): string {
  const list = BACKEND_COLORS[strategy]
  return list[Math.max(0, backendIndex) % list.length]
}

// ---- model-count sweep: time and throughput against N at one data size ----

export interface ModelCountData {
  /** the data size drawn (the largest with two or more model counts unless asked otherwise) */
  size: number | null
  /** sizes that have two or more model counts */
  sizes: number[]
  /** median time (ms) against N, per strategy and W (sequential once) */
  time: Series[]
  /** models per second against N: N / median seconds */
  throughput: Series[]
}

/**
 * Time and throughput against the model count N at one data size: a model-count sweep drawn per
 * strategy and W. Empty (no series) unless the run measured two or more model counts at a size.
 */
export function modelCountSeries(measurements: readonly Measurement[], opts: { size?: number } = {}): ModelCountData {
  const ok = measurements.filter((m) => m.status === 'ok' && Number.isFinite(m.wallMs))
  const countsAt = new Map<number, Set<number>>()
  for (const m of ok) countsAt.set(m.size, (countsAt.get(m.size) ?? new Set()).add(m.models))
  const sizes = [...countsAt]
    .filter(([, n]) => n.size >= 2)
    .map(([s]) => s)
    .sort((a, b) => a - b)
  const size = opts.size != null && sizes.includes(opts.size) ? opts.size : sizes.length ? sizes[sizes.length - 1] : null
  if (size == null) return { size, sizes, time: [], throughput: [] }
  const groups = new Map<string, { strategy: Strategy; workers: number | null; backend?: string; byN: Map<number, number[]> }>()
  for (const m of ok) {
    if (m.size !== size) continue
    const workers = m.strategy === 'sequential' ? null : m.workers
    const id = seriesId(m.strategy, workers, m.backend)
    let g = groups.get(id)
    if (!g) groups.set(id, (g = { strategy: m.strategy, workers, ...(m.backend ? { backend: m.backend } : {}), byN: new Map() }))
    g.byN.set(m.models, [...(g.byN.get(m.models) ?? []), m.wallMs])
  }
  const time: Series[] = []
  const throughput: Series[] = []
  for (const [id, g] of groups) {
    const pts = [...g.byN].map(([n, walls]) => ({ x: n, y: median(walls) }))
    const label = seriesLabel(g.strategy, g.workers, g.backend)
    const base = { id, label, strategy: g.strategy, workers: g.workers, ...(g.backend ? { backend: g.backend } : {}) }
    time.push({ ...base, points: pts })
    throughput.push({ ...base, points: pts.filter((p) => p.y > 0).map((p) => ({ x: p.x, y: p.x / (p.y / 1000) })) })
  }
  const byBackend = backendOrder(ok)
  return { size, sizes, time: sortSeries(time, byBackend), throughput: sortSeries(throughput, byBackend) }
}

/** A throughput gain below this from one measured N to the next counts as flat. */
export const FLAT_GAIN = 0.1

export interface ThroughputPlateau {
  series: Series
  /** the N from which throughput stays within FLAT_GAIN of flat to the largest N measured (where it peaks, when it falls); null: still rising there */
  flatFrom: number | null
  /** throughput at flatFrom (or at the largest N when still rising), models/s */
  rate: number
  largestN: number
  /** past flatFrom throughput falls by more than FLAT_GAIN (time grows faster than N): a peak, not a plateau */
  falls: boolean
}

/**
 * Where each series' throughput stops rising: the smallest measured N from which every step to the
 * next measured N gains less than FLAT_GAIN. Past it, time grows about linearly with N (batching
 * stops paying; a pool has every worker busy). Series with fewer than 3 points say nothing.
 */
export function throughputPlateaus(throughput: readonly Series[]): ThroughputPlateau[] {
  const out: ThroughputPlateau[] = []
  for (const s of throughput) {
    const p = [...s.points].sort((a, b) => a.x - b.x)
    if (p.length < 3) continue
    let from = p.length - 1
    while (from > 0 && p[from].y < (1 + FLAT_GAIN) * p[from - 1].y) from--
    const flat = from < p.length - 1
    const last = p[p.length - 1]
    const falls = flat && last.y < (1 - FLAT_GAIN) * p[from].y
    // a peak: the highest throughput of the flat tail (the last of equals), where it starts to fall
    let peak = from
    for (let i = from; falls && i < p.length; i++) if (p[i].y >= p[peak].y) peak = i
    out.push({ series: s, flatFrom: flat ? p[peak].x : null, rate: flat ? p[peak].y : last.y, largestN: last.x, falls })
  }
  return out
}

// ---- the advice's fits as charts (the Run view's panel and the printed report draw the same) ----

/**
 * The worker chart of one model count: per strategy the measured medians (points only), the fitted
 * Amdahl/USL curve (a line), and the fastest W and the knee read off the curve (marks).
 */
export function workerFitChart(list: readonly WorkerScaling[]): LineChartInput {
  // side by side, each backend's curves apart (named and coloured by backend)
  const name = (s: WorkerScaling) => seriesLabel(s.strategy, null, s.backend)
  const id = (s: WorkerScaling) => `${s.backend ? `${s.backend}/` : ''}${s.strategy}`
  const on = (s: WorkerScaling) => (s.backend ? { backend: s.backend } : {})
  const measured: Series[] = list.map((s) => ({
    id: `${id(s)}/measured`,
    label: `${name(s)} measured`,
    strategy: s.strategy,
    workers: null,
    ...on(s),
    points: s.points.map((p) => ({ x: p.workers, y: p.ms })),
  }))
  const curves: Series[] = list.map((s) => ({
    id: `${id(s)}/fit`,
    label: `${name(s)} ${s.law === 'usl' ? 'USL' : 'Amdahl'} fit`,
    strategy: s.strategy,
    workers: null,
    ...on(s),
    points: s.curve.map((c) => ({ x: c.workers, y: c.ms })),
  }))
  const at = (s: WorkerScaling, w: number) => ({ x: w, y: s.curve.find((c) => c.workers === w)?.ms ?? NaN })
  const first = list[0]
  return {
    title: `Time vs workers (fitted)${first ? ` — ${first.models} models at ${formatRows(first.size)} rows` : ''}`,
    series: measured,
    curves,
    pointsOnly: true,
    xLabel: 'workers (W)',
    yLabel: 'median time (ms)',
    yMin: 0,
    integerX: true,
    marks: [
      { label: 'fastest W (fit)', points: list.map((s) => at(s, s.fastestWorkers)).filter((p) => Number.isFinite(p.y)) },
      { label: 'knee', pointStyle: 'crossRot', color: '#7c3aed', points: list.map((s) => at(s, s.kneeWorkers)).filter((p) => Number.isFinite(p.y)) },
    ],
  }
}

/** "sequential", "pool (W=2)", side by side "onnxruntime pool (W=2)": a cost model's name in charts and tables */
export function costModelLabel(c: Pick<CostModel, 'strategy' | 'workers' | 'backend'>): string {
  return seriesLabel(c.strategy, c.strategy === 'sequential' ? null : c.workers, c.backend)
}

/** The cost models at one size: measured medians (points) and each fitted line a + b·N. */
export function costModelChart(costModels: readonly CostModel[]): LineChartInput {
  const measured: Series[] = costModels.map((c) => ({
    id: `${c.backend ? `${c.backend}/` : ''}${c.strategy}/W${c.workers}`,
    label: costModelLabel(c),
    strategy: c.strategy,
    workers: c.workers,
    ...(c.backend ? { backend: c.backend } : {}),
    points: c.fit.points.map((p) => ({ x: p.x, y: p.ms })),
  }))
  const lines: Series[] = costModels
    .filter((c) => Number.isFinite(c.fit.a) && Number.isFinite(c.fit.b))
    .map((c) => ({
      id: `${c.backend ? `${c.backend}/` : ''}${c.strategy}/W${c.workers}/fit`,
      label: `${costModelLabel(c)} fit`,
      strategy: c.strategy,
      workers: c.workers,
      ...(c.backend ? { backend: c.backend } : {}),
      points: c.fit.points.map((p) => ({ x: p.x, y: p.predictedMs })),
    }))
  const size = costModels[0]?.size
  return {
    title: `Cost models: time ≈ a + b·N${size != null ? ` at ${formatRows(size)} rows` : ''}`,
    series: measured,
    curves: lines,
    pointsOnly: true,
    xLabel: 'models (N)',
    yLabel: 'median time (ms)',
    yMin: 0,
  }
}
