// The user's own data (issue 14), measured: a generated 200 000 × 101 numeric CSV (≈ 180 MB) loaded
// into the data cache — seconds, MB/s and the peak RSS while loading —, the same file loaded again
// (hashed, the parse skipped), then training on that cached table against generated data of the
// same shape, both in this one process run: the MLP on wasm and the trees on the cpu engine, the
// same configs but for `data`, each run twice in the order generated, file, file, generated, medians
// of the measured repeats (warm-up, where the worker reads or generates its data, reported apart). Called by `npm run bench`; the lines, then a JSON line.
//   node --import tsx benchmarks/data-load.mts [--rows 200000] [--size 10000]
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs'
import os from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { BenchRunner } from '../src-main/bench/runner.ts'
import { loadDataFile, resolveDataSource } from '../src-main/data/index.ts'
import { NodeLauncher } from '../src-main/pool/node-launcher.ts'
import { type BenchConfig, DEFAULT_CONFIG } from '../src-shared/contract/config.ts'
import type { DataSource } from '../src-shared/contract/dataset.ts'
import type { Measurement } from '../src-shared/contract/result.ts'
import { gbdtFamily } from '../src-shared/families/gbdt.ts'
import { formatDuration } from '../src-shared/format.ts'

const { values: args } = parseArgs({ options: { rows: { type: 'string', default: '200000' }, size: { type: 'string', default: '10000' } } })
const rows = Number(args.rows)
const size = Number(args.size)
const FEATURES = 100
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-bench-data-'))
const store = join(dir, 'store')
const csv = join(dir, `numeric-${rows}x${FEATURES + 1}.csv`)

/** A seeded numeric CSV: x0..x99 uniform with 6 decimals, y a noisy sum of the first ten. */
async function writeCsv(): Promise<void> {
  const out = createWriteStream(csv)
  let state = 12345
  const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 4294967296
  let text = [...Array.from({ length: FEATURES }, (_, f) => `x${f}`), 'y'].join(',') + '\n'
  const row = new Array<string>(FEATURES + 1)
  for (let r = 0; r < rows; r++) {
    let y = 0
    for (let f = 0; f < FEATURES; f++) {
      const v = next()
      if (f < 10) y += v
      row[f] = v.toFixed(6)
    }
    row[FEATURES] = (y + next() / 10).toFixed(6)
    text += row.join(',') + '\n'
    if (text.length > 1 << 20) {
      if (!out.write(text)) await new Promise((r) => out.once('drain', r))
      text = ''
    }
  }
  await new Promise<void>((resolve, reject) => out.end(text, () => resolve()).once('error', reject))
}

/** Runs `load` while sampling this process's RSS every 20 ms; returns its result and the peak. */
async function withPeakRss<T>(load: () => Promise<T>): Promise<{ value: T; peakRss: number; ms: number }> {
  let peakRss = process.memoryUsage().rss
  const timer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20)
  const started = performance.now()
  try {
    const value = await load()
    return { value, peakRss: Math.max(peakRss, process.memoryUsage().rss), ms: performance.now() - started }
  } finally {
    clearInterval(timer)
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`
const lines: string[] = []
const json: Record<string, unknown> = { rows, columns: FEATURES + 1 }
try {
  await writeCsv()
  const bytes = statSync(csv).size
  const rssBefore = process.memoryUsage().rss
  const first = await withPeakRss(() => loadDataFile(csv, store))
  const second = await withPeakRss(() => loadDataFile(csv, store))
  const mbps = bytes / 1e6 / (first.ms / 1000)
  lines.push(
    `Data load: ${rows.toLocaleString('en-US')} × ${FEATURES + 1} numeric CSV (${(bytes / 1e6).toFixed(0)} MB) → the data cache in ${(first.ms / 1000).toFixed(1)} s (${mbps.toFixed(1)} MB/s; parse ${(first.value.loadMs / 1000).toFixed(1)} s), peak RSS ${mib(first.peakRss)} (${mib(rssBefore)} before)`,
    `Second load of the same bytes: ${(second.ms / 1000).toFixed(2)} s (hashed, parse skipped: loadMs ${second.value.loadMs})`,
  )
  Object.assign(json, {
    bytes,
    loadMs: first.ms,
    parseMs: first.value.loadMs,
    mbPerS: mbps,
    peakRssBytes: first.peakRss,
    rssBeforeBytes: rssBefore,
    secondLoadMs: second.ms,
  })

  const data: DataSource = { sha256: first.value.sha256, name: first.value.name, target: 'y', features: null, exclude: [], impute: 'none' }
  const shapes: { label: string; config: BenchConfig }[] = [
    {
      label: 'MLP on wasm',
      config: {
        ...DEFAULT_CONFIG,
        sizes: [size],
        models: [8],
        workers: [2],
        strategies: ['sequential', 'batched'],
        backend: 'wasm',
        repeats: 1,
        features: FEATURES,
        model: { ...DEFAULT_CONFIG.model, kind: 'mlp', epochs: 1 },
      } as BenchConfig,
    },
    {
      label: 'trees on cpu',
      config: {
        ...DEFAULT_CONFIG,
        sizes: [size],
        models: [4],
        workers: [2],
        strategies: ['sequential', 'batched'],
        backend: 'cpu',
        repeats: 1,
        features: FEATURES,
        model: { ...gbdtFamily.defaults, rounds: 6 },
      } as BenchConfig,
    },
  ]
  // workers from sources (as the tests run them), the same for both sides of the comparison
  const launcher = new NodeLauncher({ path: join(root, 'src-main/worker/index.ts'), execArgv: ['--import', 'tsx'] })
  json.training = []
  for (const { label, config } of shapes) {
    const resolved = await resolveDataSource(store, { ...config, data })
    // generated, file, file, generated: a machine whose load drifts favours neither side
    const generated: Measurement[] = []
    const own: Measurement[] = []
    for (const fromFile of [false, true, true, false]) {
      const outcome = fromFile
        ? await new BenchRunner(launcher, resolved.config, {}, { data: resolved.workload }).run()
        : await new BenchRunner(launcher, config).run()
      if (outcome.status !== 'ok') throw new Error(`${label}: ${outcome.error}`)
      ;(fromFile ? own : generated).push(...outcome.measurements)
    }
    lines.push(
      `Training on the cached file vs generated data, ${size.toLocaleString('en-US')} rows × ${FEATURES} features, ${label} (median of ${2 * config.repeats}, run in the order generated, file, file, generated; warm-up = the worker's data read or generated, plus one step):`,
    )
    for (const strategy of config.strategies) {
      const pick = (ms: Measurement[]) => ms.filter((m) => m.strategy === strategy)
      const gen = median(pick(generated).map((m) => m.wallMs))
      const file = median(pick(own).map((m) => m.wallMs))
      const genWarm = median(pick(generated).map((m) => m.warmupMs))
      const fileWarm = median(pick(own).map((m) => m.warmupMs))
      lines.push(
        `  ${strategy.padEnd(10)} generated ${formatDuration(gen).padStart(8)} · file ${formatDuration(file).padStart(8)} · file/generated ${(file / gen).toFixed(2)}× · warm-up ${formatDuration(genWarm)} vs ${formatDuration(fileWarm)}`,
      )
      ;(json.training as unknown[]).push({
        family: label,
        strategy,
        generatedMs: gen,
        fileMs: file,
        ratio: file / gen,
        generatedWarmupMs: genWarm,
        fileWarmupMs: fileWarm,
      })
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
console.log(lines.join('\n'))
console.log(JSON.stringify(json))
