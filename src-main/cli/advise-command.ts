// `trainpool advise RUN_ID|FILE.json --models N --size ROWS [--verify] [--store DIR] [--json FILE|-]`:
// the advice drawn from a finished run (src-shared/advice: fits, pick, interval, or the refusal);
// with --verify the recommended and runner-up options run at the target through the service, then
// predicted against measured. The words are built here; the numbers are the shared advice code's.
// --json is written as output-files.ts writes (`-`: the JSON on stdout, the words on stderr).
import { adviseFrom, describeWorkerFit, formatRange, optionLabel, predictionError } from '@shared/advice'
import {
  ADVICE_LIMITS,
  type Advice,
  type AdviceCheck,
  AdviceTargetSchema,
  type AdviceTarget,
  fieldIssues,
  numberOf,
  optionKey,
  type RunResult,
  TrainpoolError,
} from '@shared/contract'
import { formatDuration } from '@shared/format'
import { openService } from '../service/open-service'
import { defaultStoreDir } from '../store/run-store'
import { EXIT } from './bench-command'
import { flagMessage } from './options'
import { checkOutputFile, OutputError, STDOUT_PATH, writeOutputFile } from './output-files'
import { loadRun } from './report-command'

export interface AdviseFlags {
  models?: string
  size?: string
  verify?: boolean
  store?: string
  json?: string
}

const FLAG = { models: '--models', size: '--size' } as const

/** The flags' target, validated by the contract's schema; a message naming the flag otherwise. */
export function targetFromFlags(flags: AdviseFlags): AdviceTarget | string {
  // the shared rule for typed numbers (decimal, an integer written as one); NaN lets the schema name the flag
  const number = (text: string | undefined) => (text === undefined || text.trim() === '' ? undefined : numberOf(text, 'integer'))
  const raw = { models: number(flags.models), size: number(flags.size) }
  const parsed = AdviceTargetSchema.safeParse(raw)
  if (parsed.success) return parsed.data
  // the issues quote the text as given ("lots"), not the number it parsed to; one per flag (a
  // number past 2^53 breaks two rules, and both read the same once the flag's range is said)
  const issues = fieldIssues(parsed.error, { models: flags.models, size: flags.size })
  return issues
    .filter((issue, at) => issues.findIndex((other) => other.field === issue.field) === at)
    .map((i) => {
      const field = i.field as keyof typeof FLAG
      const flag = FLAG[field] ?? i.field
      const given = (flags as Record<string, unknown>)[i.field]
      if (given === undefined) {
        const range = ADVICE_LIMITS[field]
        return `${flag} is missing: the target ${field === 'size' ? 'data size in rows' : 'model count'}, a whole number from ${range.min} to ${range.max}`
      }
      return flagMessage(flag, i.field, i.message)
    })
    .join('\n')
}

export async function adviseCommand(target: string, flags: AdviseFlags, version: string): Promise<number> {
  const say = (s: string) => process.stderr.write(s.replace(/^/gm, 'trainpool advise: ') + '\n')
  const adviceTarget = targetFromFlags(flags)
  if (typeof adviceTarget === 'string') {
    say(adviceTarget)
    return EXIT.usage
  }
  // --json takes `-`: the JSON alone on standard output, the words on stderr
  const stdoutToo = { dashIsStdout: true }
  const report = flags.json === STDOUT_PATH ? process.stderr : process.stdout
  try {
    if (flags.json) await checkOutputFile('--json', flags.json, stdoutToo)
  } catch (err) {
    if (!(err instanceof OutputError)) throw err
    say(err.message)
    return EXIT[err.exit]
  }
  const writeJson = async (value: unknown): Promise<number> => {
    if (!flags.json) return EXIT.ok
    try {
      await writeOutputFile('--json', flags.json, JSON.stringify(value, null, 2) + '\n', stdoutToo)
      return EXIT.ok
    } catch (err) {
      if (!(err instanceof OutputError)) throw err
      say(err.message)
      return EXIT[err.exit]
    }
  }
  let run: RunResult
  try {
    run = await loadRun(target, flags.store)
  } catch (err) {
    if (err instanceof TrainpoolError) {
      say(err.message)
      return EXIT.usage
    }
    throw err
  }
  if (flags.verify && run.runId !== target) {
    say(`--verify needs a run id in the store (the check is stored with the run), not a file: ${target}`)
    return EXIT.usage
  }
  const advice = adviseFrom(run, adviceTarget)
  report.write(adviceReport(advice))
  if (!flags.verify) return writeJson(advice)
  if (advice.refusal !== null) {
    say('nothing to verify: the advice was refused (see above)')
    await writeJson(advice)
    return EXIT.failed
  }
  return verify(run.runId, adviceTarget, flags, version, report, writeJson)
}

async function verify(
  runId: string,
  target: AdviceTarget,
  flags: AdviseFlags,
  version: string,
  report: NodeJS.WritableStream,
  writeJson: (value: unknown) => Promise<number>,
): Promise<number> {
  const { service, store } = await openService({ storeDir: flags.store ?? defaultStoreDir(), shell: 'cli', appVersion: version })
  let verifyRunId: string
  try {
    ;({ runId: verifyRunId } = await service.verifyAdvice({ runId, ...target }))
  } catch (err) {
    if (err instanceof TrainpoolError && err.code !== 'internal') {
      process.stderr.write(`trainpool advise: ${err.message}\n`)
      return EXIT.usage
    }
    throw err
  }
  process.stderr.write(`verifying: run ${verifyRunId} measures the recommended and runner-up options at the target\n`)
  service.onEvent((e) => {
    if (e.type === 'phase' && e.phase !== 'measuring') process.stderr.write(`  ${e.message}\n`)
    if (e.type === 'measurement')
      process.stderr.write(`  ${optionLabel(e.measurement, ' ')}: ${formatDuration(e.measurement.wallMs)} (${e.measurement.status})\n`)
  })
  const onSignal = () => void service.cancel({ runId: verifyRunId })
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  let check: AdviceCheck
  try {
    check = await service.waitForAdviceCheck(verifyRunId)
  } catch (err) {
    if (!(err instanceof TrainpoolError) || err.code === 'internal') throw err
    process.stderr.write(`trainpool advise: ${err.message}\n`)
    return EXIT.failed
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
  const verifyRun = await service.getRun({ runId: verifyRunId })
  report.write(checkReport(check))
  const written = await writeJson(check)
  process.stderr.write(`saved run ${verifyRunId} and the check with run ${runId} in ${store?.dir ?? flags.store ?? defaultStoreDir()}\n`)
  if (written !== EXIT.ok) return written
  return verifyRun.status === 'ok' ? EXIT.ok : EXIT.failed
}

function table(header: string[], rows: string[][], leftColumns: number): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < leftColumns ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd()
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)]
}

/** The fits (R², σ, refusals), the worker scaling, the ranked options, then the advice line. */
export function adviceReport(advice: Advice): string {
  const out: string[] = [
    `Advice from run ${advice.runId} for ${advice.target.models} models at ${advice.target.size} rows (fitted at ${advice.fittedSize} rows)`,
  ]
  if (advice.costModels.length) {
    out.push('', 'time ≈ a + b·N, per strategy and W (least squares over the measured model counts):')
    const rankedByMeasurement = new Set(advice.options.filter((o) => o.measured).map(optionKey))
    const rows = advice.costModels.map((c) => [
      optionLabel(c, ' '),
      c.fit.points.map((p) => p.x).join(','),
      formatDuration(c.fit.a),
      formatDuration(c.fit.b),
      c.fit.r2 === null ? '–' : c.fit.r2.toFixed(3),
      c.fit.sigma === null ? '–' : formatDuration(c.fit.sigma),
      c.refusal === null
        ? 'used'
        : rankedByMeasurement.has(optionKey(c))
          ? 'no line (too few model counts): ranked by its measurement at the target'
          : `refused: ${c.refusal}`,
    ])
    out.push(...table(['option', 'N measured', 'a', 'b per model', 'R²', 'σ', ''], rows, 2).map((l) => `  ${l}`))
  }
  const widest = new Map<string, Advice['scaling'][number]>()
  for (const s of advice.scaling) if ((widest.get(s.strategy)?.models ?? 0) < s.models) widest.set(s.strategy, s)
  if (widest.size) {
    out.push('', 'time against W (at the largest N measured with several W):')
    for (const s of widest.values()) {
      out.push(`  at N=${s.models}, ${describeWorkerFit(s)}`)
    }
  }
  if (advice.options.length) {
    const anyMeasured = advice.options.some((o) => o.measured)
    out.push(
      '',
      `options at the target, fastest first (95 % prediction interval${anyMeasured ? '; measured: the median, and the fastest–slowest repeat' : ''}):`,
    )
    const best = advice.options[0].predictedMs
    const rows = advice.options.map((o) => [
      optionLabel(o, ' '),
      formatDuration(o.predictedMs),
      ...(anyMeasured ? [o.measured ? 'measured' : 'predicted'] : []),
      formatRange(o.lowMs, o.highMs),
      `${(o.predictedMs / best).toFixed(2)}×`,
    ])
    out.push(...table(['option', anyMeasured ? 'time' : 'predicted', ...(anyMeasured ? ['from'] : []), 'interval', 'relative'], rows, 1).map((l) => `  ${l}`))
  }
  out.push('', `${advice.refusal === null ? 'advice' : 'REFUSED'}: ${advice.text}`)
  return out.join('\n') + '\n'
}

/** Predicted against measured, per option, and whether the pick was right. */
export function checkReport(check: AdviceCheck): string {
  const { models, size } = check.advice.target
  const rows = check.rows.map((r) => {
    const error = predictionError(r)
    const inside = r.measuredMs === null ? '–' : r.measuredMs >= r.lowMs && r.measuredMs <= r.highMs ? 'yes' : 'no'
    return [
      optionLabel(r, ' '),
      formatDuration(r.predictedMs),
      formatRange(r.lowMs, r.highMs),
      r.measuredMs === null ? 'not measured' : formatDuration(r.measuredMs),
      error === null ? '–' : `${error >= 0 ? '+' : '−'}${Math.abs(error * 100).toFixed(1)} %`,
      inside,
    ]
  })
  const pick = check.pickRight === null ? 'not decided (an option was not measured)' : check.pickRight ? 'yes' : 'NO'
  return (
    [
      '',
      `check (run ${check.verifyRunId}): predicted vs measured at ${models} models × ${size} rows`,
      ...table(['option', 'predicted', 'interval', 'measured', 'error', 'in interval'], rows, 1).map((l) => `  ${l}`),
      `the recommended option was the fastest: ${pick}`,
    ].join('\n') + '\n'
  )
}
