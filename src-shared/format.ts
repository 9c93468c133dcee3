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

export function formatDuration(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms)) return '—'
  if (ms < 1000) return `${Math.round(ms)} ms`
  const s = ms / 1000
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`
  const m = Math.floor(s / 60)
  const rest = Math.round(s - m * 60)
  if (m < 60) return `${m} min ${rest} s`
  const h = Math.floor(m / 60)
  return `${h} h ${m % 60} min`
}

export function formatMs(ms: number): string {
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`
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
