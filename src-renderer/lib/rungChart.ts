// What a halving search's chart draws (issue 39): the run's primary metric on the held-out rows
// against rounds, one line per configuration through the rungs it trained in (each rung's mean
// over its models, as the measurement recorded what promote ranked), and the rung cuts — where the
// best 1/factor went on — as vertical lines. Read from the measurement the summary's search line
// describes (@shared/search-summary firstAtLargest), so chart and words agree.
import type { RunResult } from '@shared/contract/result'
import { configurationParams, describeConfiguration } from '@shared/contract/model-set'
import { STRATEGIES } from '@shared/contract/config'
import { familyOf } from '@shared/families'
import { firstAtLargest } from '@shared/search-summary'
import { METRIC_SPECS, REGRESSION_TASK, type Task } from '@shared/vocabulary/task'
import type { LineChartInput, Series } from './chartSeries'

/** Configurations beyond this many lines: the legend would crowd the plot, the data table names them. */
export const RUNG_CHART_LEGEND_MAX = 12

/** The chart of a halving run's rungs; null for a grid, or before a measurement with rungs finished. */
export function rungChart(run: Pick<RunResult, 'config' | 'measurements'> & { task?: Task }): LineChartInput | null {
  const set = run.config.set
  const m = firstAtLargest(run)
  if (!set || !m?.rungs?.length) return null
  const family = familyOf(run.config.model)
  const label = (c: number) => describeConfiguration(family, set, configurationParams(family, run.config.model, set, c)) || `#${c + 1}`
  const points = new Map<number, { x: number; y: number }[]>()
  for (const rung of m.rungs) {
    rung.configurations.forEach((c, k) => {
      const y = rung.validation[k]
      if (y !== null) points.set(c, [...(points.get(c) ?? []), { x: rung.rounds, y }])
    })
  }
  const series: Series[] = [...points].map(([c, ps], k) => ({
    id: `configuration/${c}`,
    label: label(c),
    strategy: STRATEGIES[k % STRATEGIES.length],
    workers: null,
    points: ps,
  }))
  const metric = METRIC_SPECS[(run.task ?? REGRESSION_TASK).metric].label
  const rungs = m.rungs
  const last = rungs[rungs.length - 1]
  const winner = last.configurations.length === 1 && last.validation[0] !== null ? last.configurations[0] : null
  return {
    title: `Validation ${metric} vs rounds, by configuration: successive halving's rungs`,
    series,
    xLabel: 'rounds',
    yLabel: `validation ${metric} (mean over ${set.folds !== null ? 'folds' : 'seeds'})`,
    xLog: true,
    // a cut after every rung but the last: the configurations that went on
    cuts: rungs.slice(0, -1).map((r, i) => ({ x: r.rounds, label: `${r.configurations.length} → ${rungs[i + 1].configurations.length}` })),
    legend: series.length <= RUNG_CHART_LEGEND_MAX,
    marks: winner !== null ? { label: `last rung: ${label(winner)}`, points: [{ x: last.rounds, y: last.validation[0]! }] } : undefined,
  }
}
