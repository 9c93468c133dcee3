import type { DataSetRecord } from './contract/dataset'

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '—'
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let v = bytes
  let i = 0
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return `${v >= 100 || i === 0 ? v.toFixed(0) : v.toFixed(1)} ${units[i]}`
}

/**
 * The one duration formatter (screen, report, PDF, estimates): "4.3 ms", "812 ms", "1.23 s",
 * "12.3 s", "1 min 6 s", "2 h 5 min"; "—" for a missing or non-finite value.
 */
export function formatDuration(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms)) return '—'
  if (ms === 0) return '0 ms'
  if (Math.abs(ms) < 9.95) return `${ms.toFixed(1)} ms`
  if (Math.abs(ms) < 999.5) return `${Math.round(ms)} ms`
  const s = ms / 1000
  if (Math.abs(s) < 9.995) return `${s.toFixed(2)} s`
  if (Math.abs(s) < 59.95) return `${s.toFixed(1)} s`
  const total = Math.round(s)
  const m = Math.floor(total / 60)
  if (m < 60) return `${m} min ${total - m * 60} s`
  return `${Math.floor(m / 60)} h ${m % 60} min`
}

export function formatNumber(n: number): string {
  return n.toLocaleString('en-US')
}

/** Compact size label: 10000 → "10k", 2000000 → "2M". */
export function formatRows(n: number): string {
  if (n >= 1_000_000 && n % 100_000 === 0) return `${n / 1_000_000}M`
  if (n >= 1000 && n % 100 === 0) return `${n / 1000}k`
  return String(n)
}

export function formatSci(x: number): string {
  if (x === 0) return '0'
  return x.toExponential(1)
}

export function formatLoss(x: number | null | undefined): string {
  if (x == null || !Number.isFinite(x)) return '—'
  return Math.abs(x) >= 0.01 ? x.toFixed(4) : x.toExponential(2)
}

/**
 * The user's data set a run trained on, in one line (CLI summary, Markdown export, report):
 * "houses.csv (sha256 3f2a9c01b2d4…) · 1200 rows × 5 columns · target price · 3 features, standardised
 * · missing values imputed (mean) in 1 column · rows sampled with seed 42"
 */
export function formatDataSet(d: DataSetRecord): string {
  const imputed = d.imputed ? Object.keys(d.imputed).length : 0
  return [
    `${d.name} (sha256 ${d.sha256.slice(0, 12)}…)`,
    `${d.rows} rows × ${d.columns} columns`,
    `target ${d.target}`,
    `${d.features.length} feature${d.features.length === 1 ? '' : 's'}, ${d.standardised ? 'standardised' : 'raw'}` +
      (imputed ? `, missing values imputed (mean) in ${imputed} column${imputed === 1 ? '' : 's'}` : ''),
    `rows sampled with seed ${d.sampleSeed}`,
  ].join(' · ')
}

/** A statistic at a readable precision (4 significant digits; an exponent only below 0.001 or from 1e9). */
export function formatStat(n: number): string {
  if (!Number.isFinite(n)) return String(n)
  const a = Math.abs(n)
  if (a !== 0 && (a >= 1e9 || a < 1e-3)) return n.toExponential(3)
  return Number(n.toPrecision(4)).toLocaleString('en-US', { maximumFractionDigits: 6 })
}

/** A run's data set as label/value rows (the Run view, History and the printable report); formatDataSet is the one-line form. */
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
    // a text target's statistics would be of its class codes: its classes say what it holds
    [
      'Target',
      d.targetLevels
        ? `${d.target}: text, ${d.targetLevels.length} classes (${d.targetLevels.join(', ')})`
        : `${d.target}: mean ${formatStat(t.mean)}, std ${formatStat(t.std)}, range ${formatStat(t.min)} … ${formatStat(t.max)}`,
    ],
    [`Features (${d.features.length})`, d.features.join(', ')],
    ['Preparation', prep.join('; ')],
    ['Row samples', `seed ${d.sampleSeed} (the same rows for every strategy and model)`],
  ]
}
