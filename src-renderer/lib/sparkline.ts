/** SVG polyline points for values scaled into a w×h box (y grows downward); "" for < 2 values. */
export function sparklinePoints(values: readonly number[], w: number, h: number, pad = 2): string {
  const v = values.filter((x) => Number.isFinite(x))
  if (v.length < 2) return ''
  let lo = Infinity
  let hi = -Infinity
  for (const x of v) {
    if (x < lo) lo = x
    if (x > hi) hi = x
  }
  const span = hi - lo || 1
  const dx = (w - 2 * pad) / (v.length - 1)
  return v.map((x, i) => `${(pad + i * dx).toFixed(1)},${(pad + (1 - (x - lo) / span) * (h - 2 * pad)).toFixed(1)}`).join(' ')
}
