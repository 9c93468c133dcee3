// Reading a stored or exported run of any known schema version: older versions are migrated to the
// current one before validation; an unknown version is refused with the reason (listed as damaged).
import { TrainpoolError } from '../vocabulary/errors'
import { type RunResult, RunResultSchema, SCHEMA_VERSION } from './result'

type Json = Record<string, unknown>

/** v1 (until the model-family seam): MLP fields at the top of the config, `trainFlops`, `gflops`,
 * and `trainMs` meaning the fused group's time under batched. */
function fromV1(run: Json): Json {
  const config = { ...(run.config as Json) }
  const model = { kind: 'mlp', epochs: config.epochs, batchSize: config.batchSize, hidden: config.hidden, lr: config.lr }
  for (const k of ['epochs', 'batchSize', 'hidden', 'lr']) delete config[k]
  const measurements = ((run.measurements as Json[]) ?? []).map((m) => {
    const { trainFlops, ...rest } = m
    const fused = m.strategy === 'batched'
    return {
      ...rest,
      work: trainFlops,
      perModel: ((m.perModel as Json[]) ?? []).map((p) => ({ ...p, trainMs: fused ? null : p.trainMs, groupTrainMs: fused ? p.trainMs : null })),
    }
  })
  const summary = ((run.summary as Json[]) ?? []).map(({ gflops, ...rest }) => ({ ...rest, workRate: gflops }))
  return { ...run, schemaVersion: 2, config: { ...config, model }, measurements, summary }
}

const MIGRATIONS: Record<number, (run: Json) => Json> = { 1: fromV1 }

/** Parses a run from any known schema version. Throws TrainpoolError('damaged') with the reason. */
export function parseRunResult(raw: unknown, runId = '?'): RunResult {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    const held = raw === null ? 'null' : Array.isArray(raw) ? 'an array' : `a ${typeof raw}`
    throw new TrainpoolError('damaged', `run ${runId}: the file holds ${held}, not a run object ({"schemaVersion": …, "runId": …})`)
  }
  let run = raw as Json | null
  let version = run?.schemaVersion
  while (typeof version === 'number' && version < SCHEMA_VERSION && MIGRATIONS[version]) {
    run = MIGRATIONS[version](run!)
    version = run.schemaVersion
  }
  if (version !== SCHEMA_VERSION) {
    throw new TrainpoolError('damaged', `run ${runId}: schemaVersion ${JSON.stringify(version)} is not supported (this Trainpool reads 1 to ${SCHEMA_VERSION})`)
  }
  const parsed = RunResultSchema.safeParse(run)
  if (!parsed.success) {
    const first = parsed.error.issues[0]
    throw new TrainpoolError('damaged', `run ${runId}: ${first.path.join('.') || 'file'}: ${first.message}`)
  }
  return parsed.data
}
