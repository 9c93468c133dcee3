// Chart titles that stay readable. Chart.js draws a title wider than its chart squeezed into that
// width (canvas fillText's maxWidth), so a long device name shrank the whole title to an unreadable
// sliver. Instead the title is broken into lines at its separators (" — ", " · "), and a part still
// too wide — a long device name — is cut with an ellipsis; the full title stays in the figure's
// caption and the canvas's label. The app's charts and the printed report's use the same rule.
import { Chart, type Scriptable } from 'chart.js'

/** the most lines a title takes before its last one is cut short */
const MAX_LINES = 3

/** `text` cut to fit `maxWidth` with an ellipsis (whole when it fits). */
function cutToFit(text: string, maxWidth: number, measure: (s: string) => number): string {
  if (measure(text) <= maxWidth) return text
  let keep = text.length
  while (keep > 1 && measure(`${text.slice(0, keep).trimEnd()}…`) > maxWidth) keep--
  return `${text.slice(0, keep).trimEnd()}…`
}

/**
 * A title as lines no wider than `maxWidth` (as `measure` says): whole when it fits, else broken
 * after its separators, at most MAX_LINES lines, a part too wide cut with an ellipsis.
 */
export function titleLines(text: string, maxWidth: number, measure: (s: string) => number): string[] {
  if (maxWidth <= 0 || measure(text) <= maxWidth) return [text]
  // each part keeps the separator that follows it, so a line ends with "—" or "·" where the title goes on
  const parts = text.split(/(?<= — | · )/).map((p) => p.trim())
  const lines: string[] = []
  for (const part of parts) {
    const last = lines.length ? lines[lines.length - 1] : null
    if (last !== null && measure(`${last} ${part}`) <= maxWidth) lines[lines.length - 1] = `${last} ${part}`
    else lines.push(part)
  }
  const kept = lines.slice(0, MAX_LINES)
  if (lines.length > MAX_LINES) kept[MAX_LINES - 1] = `${kept[MAX_LINES - 1]} ${lines.slice(MAX_LINES).join(' ')}`
  return kept.map((line) => cutToFit(line, maxWidth, measure))
}

/**
 * Chart.js's title text for `title` at `fontPx` bold, fitted to the chart's width each time it is
 * laid out (drawn, updated, resized). Chart.js resolves its title options as scriptable (a function
 * of the chart), though its types say a string: typed as the text it resolves to.
 */
export function readableTitle(title: string, fontPx: number): string {
  const text: Scriptable<string | string[], { chart: Chart }> = ({ chart }) => {
    const ctx = chart.ctx
    if (!ctx) return title
    ctx.save()
    ctx.font = `bold ${fontPx}px ${chart.options.font?.family ?? Chart.defaults.font.family}`
    const lines = titleLines(title, chart.width - 16, (s) => ctx.measureText(s).width)
    ctx.restore()
    return lines.length === 1 ? lines[0] : lines
  }
  return text as unknown as string
}
