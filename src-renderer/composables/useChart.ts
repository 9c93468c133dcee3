// Chart.js used directly: the instance lives in a plain variable (never reactive), is updated in
// place with update('none'), and destroyed on unmount. Where a canvas has no 2-D context (happy-dom,
// print), no chart is created and the HTML data tables next to it carry the numbers.
import {
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  LogarithmicScale,
  PointElement,
  Title,
  Tooltip,
  type ChartDataset,
  type ChartOptions,
  type Plugin,
} from 'chart.js'
import { onBeforeUnmount, onMounted, watch, type Ref } from 'vue'
import type { LineChartInput, MarkSet, Point, Series } from '../lib/chartSeries'
import { BACKEND_DASH, seriesColor, STRATEGY_STYLE } from '../lib/chartSeries'
import { readableTitle } from '../lib/chartTitle'

Chart.register(LineController, LineElement, PointElement, LinearScale, LogarithmicScale, Title, Tooltip, Legend)

/** Marks the reference dataset, so the label plugin finds it. */
const REFERENCE = Symbol('reference')
type ReferenceDataset = LineDataset & { [REFERENCE]?: string }

type LineDataset = ChartDataset<'line', Point[]>

const EXTRA_DASH = [[], [8, 3, 2, 3], [1, 2], [10, 4]]
const EXTRA_POINTS = ['circle', 'rectRot', 'crossRot', 'star'] as const

/** Pure: the datasets a chart receives for some series (one per series, plus marks and the reference line). */
export function toDatasets(input: Pick<LineChartInput, 'series' | 'marks' | 'reference' | 'curves' | 'pointsOnly'>): LineDataset[] {
  // backends side by side: each backend's place among the series (first seen first) picks its colours and dash
  const backends = [...new Set([...input.series, ...(input.curves ?? [])].map((s) => s.backend ?? ''))]
  const backendIndex = (b: string | undefined) => backends.indexOf(b ?? '')
  const marks = input.marks == null ? [] : Array.isArray(input.marks) ? input.marks : [input.marks]
  const reference = input.reference ? referenceDataset(input.reference, input.series) : null
  return [
    ...seriesDatasets(input.series, backendIndex, input.pointsOnly),
    ...(input.curves ?? []).map((c) => curveDataset(c, seriesColor(c.strategy, backendIndex(c.backend)))),
    ...marks.filter((m) => m.points.length).map(markDataset),
    ...(reference ? [reference] : []),
  ]
}

const xyOf = (points: readonly Point[]): Point[] => points.map((p) => ({ x: p.x, y: p.y }))

/** The measured series: a strategy's colour, dash and point style, told apart per W and per backend. */
function seriesDatasets(series: readonly Series[], backendIndex: (b: string | undefined) => number, pointsOnly?: boolean): LineDataset[] {
  const perStrategyCount = new Map<string, number>()
  return series.map((s) => {
    const st = STRATEGY_STYLE[s.strategy]
    const bi = backendIndex(s.backend)
    const key = `${s.backend ?? ''}/${s.strategy}`
    const nth = perStrategyCount.get(key) ?? 0
    perStrategyCount.set(key, nth + 1)
    // a second W of the same strategy keeps the colour but changes dash and point style; a second
    // backend changes the colour and the dash
    const dash = nth > 0 ? EXTRA_DASH[nth % EXTRA_DASH.length] : bi > 0 ? BACKEND_DASH[bi % BACKEND_DASH.length] : st.dash
    const point = nth === 0 ? st.point : EXTRA_POINTS[nth % EXTRA_POINTS.length]
    const color = seriesColor(s.strategy, bi)
    return {
      label: s.label,
      data: xyOf(s.points),
      borderColor: color,
      backgroundColor: color,
      borderDash: dash,
      borderWidth: 2,
      pointStyle: point,
      pointRadius: 4,
      pointHoverRadius: 6,
      tension: 0,
      ...(pointsOnly ? { showLine: false, pointRadius: 5 } : {}),
    }
  })
}

/** A fitted curve: a thin line in its series' colour, no points. */
function curveDataset(c: Series, color: string): LineDataset {
  return {
    label: c.label,
    data: xyOf(c.points),
    borderColor: color,
    backgroundColor: color,
    borderWidth: 1.5,
    borderDash: [],
    pointRadius: 0,
    pointHoverRadius: 0,
    pointStyle: 'line',
    tension: 0,
  }
}

/** Highlighted points: large marks (a green star unless the set says otherwise), no line. */
function markDataset(m: MarkSet): LineDataset {
  const color = m.color ?? '#16a34a'
  return {
    label: m.label,
    data: xyOf(m.points),
    borderColor: color,
    backgroundColor: color,
    pointStyle: m.pointStyle ?? 'star',
    pointRadius: 10,
    borderWidth: 2,
    showLine: false,
  }
}

/** A dashed level across the series' x range, marked for the label plugin; none without points. */
function referenceDataset(reference: { label: string; y: number }, series: readonly Series[]): ReferenceDataset | null {
  const xs = series.flatMap((s) => s.points.map((p) => p.x))
  if (!xs.length) return null
  const st = STRATEGY_STYLE.sequential
  const ref: ReferenceDataset = {
    label: reference.label,
    data: [
      { x: Math.min(...xs), y: reference.y },
      { x: Math.max(...xs), y: reference.y },
    ],
    borderColor: st.color,
    backgroundColor: st.color,
    borderDash: [6, 4],
    borderWidth: 1.5,
    pointRadius: 0,
    pointHoverRadius: 0,
    pointStyle: 'line',
    tension: 0,
  }
  ref[REFERENCE] = reference.label
  return ref
}

/** Writes a reference line's label on the chart, just above the line, in the middle (the ends carry points). */
export const referenceLabelPlugin: Plugin<'line'> = {
  id: 'trainpoolReferenceLabel',
  afterDatasetsDraw(chart) {
    const { ctx, chartArea, scales } = chart
    chart.data.datasets.forEach((d, i) => {
      const label = (d as ReferenceDataset)[REFERENCE]
      const p = (d.data as Point[])[0]
      if (!label || !p || !chart.isDatasetVisible(i)) return
      const y = scales.y.getPixelForValue(p.y)
      if (!Number.isFinite(y) || y < chartArea.top || y > chartArea.bottom) return
      ctx.save()
      ctx.font = '11px system-ui, sans-serif'
      ctx.fillStyle = String(d.borderColor ?? '#6b7280')
      ctx.textAlign = 'center'
      ctx.textBaseline = 'bottom'
      ctx.fillText(label, (chartArea.left + chartArea.right) / 2, y - 3)
      ctx.restore()
    })
  },
}

/** The cuts a chart draws, as its options carry them for the plugin below. */
interface CutOptions {
  cuts?: LineChartInput['cuts']
  color?: string
}

/** Draws vertical lines at `cuts` across the plot, each labelled at its top (a halving search's rung cuts). */
export const cutLinesPlugin: Plugin<'line', CutOptions> = {
  id: 'trainpoolCuts',
  afterDatasetsDraw(chart, _args, opts) {
    const { ctx, chartArea, scales } = chart
    for (const cut of opts.cuts ?? []) {
      const x = scales.x.getPixelForValue(cut.x)
      if (!Number.isFinite(x) || x < chartArea.left || x > chartArea.right) continue
      ctx.save()
      ctx.strokeStyle = opts.color ?? '#6b7280'
      ctx.fillStyle = opts.color ?? '#6b7280'
      ctx.setLineDash([4, 4])
      ctx.lineWidth = 1
      ctx.beginPath()
      ctx.moveTo(x, chartArea.top)
      ctx.lineTo(x, chartArea.bottom)
      ctx.stroke()
      ctx.font = '11px system-ui, sans-serif'
      ctx.textAlign = 'left'
      ctx.textBaseline = 'top'
      ctx.fillText(cut.label, x + 3, chartArea.top + 2)
      ctx.restore()
    }
  },
}

function prefersDark(): boolean {
  return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches
}

/** A single x value (one data size, one W) gets a centred axis with that one tick, not 1 900…2 100. */
export function singleXAxis(series: Series[]): { min: number; max: number; value: number } | null {
  const xs = new Set(series.flatMap((s) => s.points.map((p) => p.x)))
  if (xs.size !== 1) return null
  const [value] = xs
  const pad = Math.max(Math.abs(value) * 0.5, 1)
  return { min: value - pad, max: value + pad, value }
}

function options(input: LineChartInput): ChartOptions<'line'> {
  const dark = prefersDark()
  const single = input.xLog ? null : singleXAxis(input.series)
  const text = dark ? '#d1d5db' : '#374151'
  const grid = dark ? 'rgba(255,255,255,0.08)' : 'rgba(0,0,0,0.08)'
  return {
    animation: false,
    responsive: true,
    maintainAspectRatio: false,
    parsing: false,
    normalized: true,
    color: text,
    plugins: {
      title: { display: true, text: readableTitle(input.title, 13), color: text, font: { size: 13, weight: 'bold' } },
      legend: { display: input.legend !== false, labels: { color: text, usePointStyle: true } },
      tooltip: { mode: 'nearest', intersect: false },
      ...({ trainpoolCuts: { cuts: input.cuts ?? [], color: text } satisfies CutOptions } as object),
    },
    scales: {
      x: {
        type: input.xLog ? 'logarithmic' : 'linear',
        ...(single
          ? {
              min: single.min,
              max: single.max,
              afterBuildTicks: (axis: { ticks: { value: number }[] }) => {
                axis.ticks = [{ value: single.value }]
              },
            }
          : {}),
        title: { display: true, text: input.xLabel, color: text },
        ticks: { color: text, ...(input.integerX ? { stepSize: 1, precision: 0 } : {}) },
        grid: { color: grid },
      },
      y: {
        type: input.yLog ? 'logarithmic' : 'linear',
        min: input.yLog ? undefined : input.yMin,
        title: { display: true, text: input.yLabel, color: text },
        ticks: { color: text },
        grid: { color: grid },
      },
    },
  }
}

/**
 * Draws `source()` into the canvas and keeps it current. Returns whether a real chart exists
 * (false where the canvas has no 2-D context) and the last datasets handed to Chart.js.
 */
export function useLineChart(canvas: Ref<HTMLCanvasElement | null>, source: () => LineChartInput) {
  let chart: Chart<'line', Point[]> | null = null
  const state = { drawn: false, lastDatasets: [] as LineDataset[], updates: 0 }

  function create() {
    const el = canvas.value
    if (!el || chart) return
    let ctx: CanvasRenderingContext2D | null = null
    try {
      ctx = el.getContext('2d')
    } catch {
      ctx = null
    }
    if (!ctx) return
    const input = source()
    state.lastDatasets = toDatasets(input)
    try {
      chart = new Chart(ctx, { type: 'line', data: { datasets: state.lastDatasets }, options: options(input), plugins: [referenceLabelPlugin, cutLinesPlugin] })
      state.drawn = true
    } catch {
      chart = null
    }
  }

  function update(input: LineChartInput) {
    state.lastDatasets = toDatasets(input)
    state.updates++
    if (!chart) return
    const old = chart.data.datasets
    // mutate in place so Chart.js keeps its element state; replace only when the series set changes
    if (old.length === state.lastDatasets.length && old.every((d, i) => d.label === state.lastDatasets[i].label)) {
      old.forEach((d, i) => (d.data = state.lastDatasets[i].data))
    } else {
      chart.data.datasets = state.lastDatasets
    }
    const opts = options(input)
    chart.options.plugins!.title = opts.plugins!.title
    chart.options.plugins!.legend = opts.plugins!.legend
    ;(chart.options.plugins as Record<string, unknown>).trainpoolCuts = (opts.plugins as Record<string, unknown>).trainpoolCuts
    chart.options.color = opts.color
    chart.options.scales = opts.scales
    chart.update('none')
  }

  // the theme can change while the page is open (the OS switches to dark): redraw in its colours
  const scheme = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null
  const onScheme = () => update(source())
  onMounted(() => {
    create()
    scheme?.addEventListener?.('change', onScheme)
  })
  watch(source, update)
  onBeforeUnmount(() => {
    scheme?.removeEventListener?.('change', onScheme)
    chart?.destroy()
    chart = null
    state.drawn = false
  })

  return state
}
