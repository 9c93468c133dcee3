// Can the advice be trusted? For the MLP (wasm, default params) and the trees (gbdt, cpu engine) at
// one data size: a model-count sweep up to N = 50 (sequential, pool, batched; W = 1, 2), the advice
// for N = 200 from it (src-shared/advice: every strategy/W predicted with its 95 % interval), then
// a real run at N = 200 of every strategy/W, and predicted against measured with the % error, whether
// the measured time fell inside the interval, and whether the recommended option was the fastest.
// Target: within 15 % for every strategy. Called by `npm run bench` (benchmarks/run.mjs,
// BENCH_ADVICE=0 skips it); prints the tables and a JSON line last.
//   node --import tsx benchmarks/advice-check.mts
// Options (env): BENCH_ADVICE_SIZE (10000), BENCH_ADVICE_SWEEP_TO (50), BENCH_ADVICE_TARGET (200),
// BENCH_ADVICE_REPEATS (1), BENCH_ADVICE_GBDT_ROUNDS (20: the trees' check only — at the default 100
// rounds the trees take ~2 s per model, and the sweep plus N = 200 in five strategy/W combinations
// would train ~1 600 models ≈ 45 min; the time per model scales with rounds, the question asked
// does not change), BENCH_ADVICE_FAMILIES (mlp,gbdt), BENCH_ADVICE_CLI (built | source: the CLI
// from out/ when built, else from the sources via tsx).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { adviseFrom, checkAdvice, formatRange, optionLabel, predictionError } from '../src-shared/advice/advise.ts'
import { predictWithInterval } from '../src-shared/advice/linear-fit.ts'
import { parseRunResult } from '../src-shared/contract/migrate.ts'
import type { RunResult } from '../src-shared/contract/result.ts'
import { formatDuration } from '../src-shared/format.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const outDir = join(root, 'bench-results')
mkdirSync(outDir, { recursive: true })
const env = (name: string, dflt: string) => process.env[name] ?? dflt
const size = Number(env('BENCH_ADVICE_SIZE', '10000'))
const sweepTo = Number(env('BENCH_ADVICE_SWEEP_TO', '50'))
const targetN = Number(env('BENCH_ADVICE_TARGET', '200'))
const repeats = env('BENCH_ADVICE_REPEATS', '1')
const gbdtRounds = env('BENCH_ADVICE_GBDT_ROUNDS', '20')
const families = env('BENCH_ADVICE_FAMILIES', 'mlp,gbdt').split(',')
const built = existsSync(join(root, 'out', 'main', 'cli.js'))
const fromSource = env('BENCH_ADVICE_CLI', built ? 'built' : 'source') === 'source'
const cli = fromSource ? ['--import', 'tsx', join(root, 'src-main/cli/index.ts')] : [join(root, 'bin/trainpool.js')]
const ERROR_TARGET = 0.15

function bench(label: string, args: string[]): RunResult {
  const json = join(outDir, `advice-${label}.json`)
  const all = [
    'bench',
    ...args,
    '--sizes',
    String(size),
    '--workers',
    '1,2',
    '--strategies',
    'sequential,pool,batched',
    '--repeats',
    repeats,
    '--no-save',
    '--json',
    json,
  ]
  process.stderr.write(`\n== advice check, ${label}: trainpool ${all.join(' ')}\n`)
  const started = performance.now()
  const r = spawnSync(process.execPath, [...cli, ...all], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
  if (r.status !== 0) throw new Error(`trainpool bench (${label}) exited ${r.status}`)
  process.stderr.write(`   (${formatDuration(performance.now() - started)} in all)\n`)
  return parseRunResult(JSON.parse(readFileSync(json, 'utf8')))
}

const cases = [
  { family: 'mlp', label: 'MLP, wasm, default params (100→64→1, 3 epochs, batch 512)', args: ['--backend', 'wasm'] },
  {
    family: 'gbdt',
    label: `trees, gbdt on the cpu engine, default params but ${gbdtRounds} rounds`,
    args: ['--model', 'gbdt', '--backend', 'cpu', '--rounds', gbdtRounds],
  },
].filter((c) => families.includes(c.family))

const results: unknown[] = []
const lines: string[] = [
  `Advice check: a sweep N = 1…${sweepTo} at ${size} rows (W = 1, 2; ${repeats} repeat${repeats === '1' ? '' : 's'}) predicts N = ${targetN}; then N = ${targetN} measured. Target: every strategy within ${ERROR_TARGET * 100} %.`,
  `CLI ${fromSource ? 'from the sources (tsx)' : 'built (out/)'}. The machine is shared: absolute times are noisy, the error column is the point.`,
]
for (const c of cases) {
  const sweep = bench(`${c.family}-sweep`, [...c.args, '--models', String(sweepTo), '--sweep', 'models'])
  const advice = adviseFrom(sweep, { models: targetN, size })
  const target = bench(`${c.family}-target`, [...c.args, '--models', String(targetN)])
  const check = checkAdvice(advice, target)
  lines.push('', `${c.label} — ${sweep.environment?.device ?? ''}`)
  lines.push(
    `  fits (time ≈ a + b·N): ${advice.costModels.map((m) => `${optionLabel(m, ' ')} R² ${m.fit.r2?.toFixed(3) ?? '–'}${m.refusal ? ' REFUSED' : ''}`).join(', ')}`,
  )
  lines.push(`  advice: ${advice.text}`)
  lines.push(
    `  ${'option'.padEnd(12)} ${'predicted'.padStart(9)} ${'95 % interval'.padStart(16)} ${'measured'.padStart(9)} ${'error'.padStart(8)}  in interval  within 15 %`,
  )
  let worst = 0
  // every strategy/W: a refused fit is shown too, with what its line would have said, marked refused
  const rows = advice.costModels
    .map((m) => {
      const measuredMs = target.summary.find((s) => s.strategy === m.strategy && s.workers === m.workers && s.models === targetN)?.medianMs ?? null
      return { strategy: m.strategy, workers: m.workers, ...predictWithInterval(m.fit, targetN), measuredMs, refused: m.refusal !== null }
    })
    .sort((a, b) => a.predictedMs - b.predictedMs)
  for (const r of rows) {
    const e = predictionError(r)
    if (e !== null && !r.refused) worst = Math.max(worst, Math.abs(e))
    const inside = r.measuredMs === null ? '–' : r.measuredMs >= r.lowMs && r.measuredMs <= r.highMs ? 'yes' : 'no'
    lines.push(
      `  ${optionLabel(r, ' ').padEnd(12)} ${formatDuration(r.predictedMs).padStart(9)} ${formatRange(r.lowMs, r.highMs).padStart(16)} ${formatDuration(r.measuredMs).padStart(9)} ${(e === null ? '–' : `${(e * 100).toFixed(1)} %`).padStart(8)}  ${inside.padEnd(11)}  ${e === null ? '–' : Math.abs(e) <= ERROR_TARGET ? 'yes' : 'NO'}${r.refused ? '  (fit refused: not advised)' : ''}`,
    )
  }
  // right when the recommended option was the measured fastest of every strategy/W (advised or refused)
  const measuredBest = rows.filter((r) => r.measuredMs !== null).sort((a, b) => a.measuredMs! - b.measuredMs!)[0]
  const pick = advice.options[0]
  const pickRight = pick && measuredBest ? pick.strategy === measuredBest.strategy && pick.workers === measuredBest.workers : null
  lines.push(
    `  best pick right: ${pickRight === null ? 'no pick' : pickRight ? 'yes' : `NO (picked ${optionLabel(pick, ' ')}, measured fastest ${optionLabel(measuredBest, ' ')}, ${formatDuration(measuredBest.measuredMs)} vs ${formatDuration(rows.find((r) => r.strategy === pick.strategy && r.workers === pick.workers)?.measuredMs)})`}; ${advice.options.length ? `worst error of the advised options ${(worst * 100).toFixed(1)} % (target ≤ ${ERROR_TARGET * 100} %: ${worst <= ERROR_TARGET ? 'met' : 'MISSED'})` : 'no option advised (every fit refused, or a refused one measured faster than the pick): the target is not met, the advice said so'}`,
  )
  results.push({
    family: c.family,
    label: c.label,
    size,
    sweepTo,
    targetN,
    repeats: Number(repeats),
    advice,
    check,
    rows,
    pickRight,
    worstError: advice.options.length ? worst : null,
  })
}
writeFileSync(join(outDir, 'advice-check.json'), JSON.stringify(results, null, 2))
console.log(lines.join('\n'))
console.log(
  JSON.stringify(
    results.map((r) => {
      const x = r as { family: string; worstError: number | null; pickRight: boolean | null }
      return { family: x.family, worstError: x.worstError, pickRight: x.pickRight }
    }),
  ),
)
