// What a run's data set record says, in the lines the Run view, History and the printable report
// show (one derivation, so they never differ): the file, its size, the target's statistics, the
// columns used and how they were prepared.
import type { DataSetRecord } from '@shared/contract/dataset'
import { formatNumber } from '@shared/format'

/** A statistic at a readable precision (4 significant digits; an exponent only below 0.001 or from 1e9). */
export function stat(n: number): string {
  if (!Number.isFinite(n)) return String(n)
  const a = Math.abs(n)
  if (a !== 0 && (a >= 1e9 || a < 1e-3)) return n.toExponential(3)
  return Number(n.toPrecision(4)).toLocaleString('en-US', { maximumFractionDigits: 6 })
}

/** Label/value rows describing the data set a run trained on. */
export function dataSetRows(d: DataSetRecord): [string, string][] {
  const t = d.targetStats
  const imputed = d.imputed ? Object.values(d.imputed).reduce((a, b) => a + b, 0) : 0
  const prep = [
    d.standardised ? 'features standardised with the training rows' : 'features used as they are',
    d.impute === 'mean' ? `missing values imputed with the training mean (${formatNumber(imputed)} values)` : null,
  ].filter((x): x is string => x !== null)
  return [
    ['File', d.name],
    ['sha256', d.sha256.slice(0, 12)],
    ['Rows × columns', `${formatNumber(d.rows)} × ${formatNumber(d.columns)}`],
    ['Target', `${d.target}: mean ${stat(t.mean)}, std ${stat(t.std)}, range ${stat(t.min)} … ${stat(t.max)}`],
    [`Features (${d.features.length})`, d.features.join(', ')],
    ['Preparation', prep.join('; ')],
    ['Row samples', `seed ${d.sampleSeed} (the same rows for every strategy and model)`],
  ]
}
