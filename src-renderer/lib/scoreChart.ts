// What a model set's score charts draw: per varied hyperparameter, the score of every configuration
// against that field's value — one line per combination of the other varied fields, so a field's
// effect reads along a line and the others' across lines — and the best configuration starred.
// A list field (hidden layers) is placed by the position of its value, labelled with the value.
// The score is the board's: the run's primary metric (MSE, log loss, accuracy, ROC AUC), named on
// the axis and in the title.
import { gridValueText, type ModelSet } from '@shared/contract/model-set'
import type { ParamField } from '@shared/families'
import { type Leaderboard, scoreLabel } from '@shared/leaderboard'
import { STRATEGIES } from '@shared/contract/config'
import type { LineChartInput, Series } from './chartSeries'

export interface ScoreChart {
  field: ParamField
  input: LineChartInput
  /** the x axis' words for a position (a list field's value) */
  formatX: (x: number) => string
}

export function scoreCharts(board: Leaderboard, fields: readonly ParamField[], set: ModelSet): ScoreChart[] {
  const varied = fields.filter((f) => (set.grid[f.key]?.length ?? 0) > 1)
  const score = scoreLabel(board)
  const yLabel = `${score} (mean over ${board.scoreKind === 'validation' ? 'folds' : 'seeds'})`
  const best = board.entries[0]
  return varied.map((field) => {
    const values = set.grid[field.key]
    const isList = field.type === 'intList'
    const xOf = (v: unknown) => (isList ? values.findIndex((w) => gridValueText(w) === gridValueText(v as number[])) : (v as number))
    const others = varied.filter((f) => f !== field)
    const groups = new Map<string, { x: number; y: number }[]>()
    for (const e of board.entries) {
      const key = others.map((f) => `${f.flag.replace(/^--/, '')} ${gridValueText(e.params[f.key])}`).join(' · ') || 'every configuration'
      groups.set(key, [...(groups.get(key) ?? []), { x: xOf(e.params[field.key]), y: e.score.mean }])
    }
    const series: Series[] = [...groups].map(([label, points], k) => ({
      id: `${field.key}/${label}`,
      label,
      strategy: STRATEGIES[k % STRATEGIES.length],
      workers: null,
      points: points.sort((a, b) => a.x - b.x),
    }))
    const name = field.flag.replace(/^--/, '')
    return {
      field,
      formatX: (x: number) => (isList ? gridValueText(values[x] ?? []) : String(x)),
      input: {
        title: `${score.charAt(0).toUpperCase()}${score.slice(1)} vs ${name}`,
        series,
        xLabel: name,
        yLabel,
        integerX: isList,
        marks: best ? { label: `best: ${best.label}`, points: [{ x: xOf(best.params[field.key]), y: best.score.mean }] } : undefined,
      },
    }
  })
}
