// Same work, proven: every strategy trained every model, and model i's final test MSE agrees
// across strategies (model i is the same computation everywhere: same init seed, same data, same
// batch order). Where a family's training is exact (trees), model i's fingerprint must match too.
// The tolerance is the family's. A disagreement fails the run, loudly.
import type { BenchConfig, Measurement, Verification } from '@shared/contract'
import { familyOf } from '@shared/families'
import { expandPlan } from '@shared/plan'

export function verify(config: BenchConfig, measurements: readonly Measurement[], tolerance = familyOf(config.model).sameWorkTolerance): Verification {
  const problems: string[] = []
  const modelsTrained: Record<string, number> = {}
  let maxRel = 0
  const planned = expandPlan(config)
  for (const size of config.sizes) {
    for (const models of config.models) {
      const here = measurements.filter((m) => m.size === size && m.models === models)
      const reference =
        here.find((m) => m.status === 'ok' && m.strategy === 'sequential') ?? here.find((m) => m.status === 'ok')
      const refMse = new Map(reference?.perModel.map((p) => [p.index, p.testMse]) ?? [])
      const refFingerprint = new Map(reference?.perModel.map((p) => [p.index, p.fingerprint]) ?? [])
      for (const m of here) {
        const where = `${m.strategy} W=${m.workers} repeat ${m.repeat} at ${size} rows × ${models} models`
        modelsTrained[m.strategy] = Math.min(modelsTrained[m.strategy] ?? Infinity, m.modelsTrained)
        if (m.status !== 'ok') problems.push(`${where}: ${m.status}`)
        if (m.modelsTrained !== models) problems.push(`${where}: trained ${m.modelsTrained} of ${models} models`)
        const seen = new Set(m.perModel.map((p) => p.index))
        if (m.status === 'ok' && seen.size !== models) problems.push(`${where}: results for ${seen.size} distinct models, expected ${models}`)
        for (const p of m.perModel) {
          if (!Number.isFinite(p.testMse)) {
            problems.push(`${where}: model ${p.index} test MSE is ${p.testMse}`)
            continue
          }
          const fingerprint = refFingerprint.get(p.index)
          if (fingerprint !== undefined && p.fingerprint !== fingerprint) {
            problems.push(`${where}: model ${p.index} differs from ${reference!.strategy}'s (fingerprint ${p.fingerprint ?? 'missing'} vs ${fingerprint})`)
          }
          const ref = refMse.get(p.index)
          if (ref === undefined) continue
          const rel = Math.abs(p.testMse - ref) / Math.max(Math.abs(ref), 1e-12)
          if (rel > maxRel) maxRel = rel
          if (rel > tolerance) {
            problems.push(
              `${where}: model ${p.index} test MSE ${p.testMse.toPrecision(7)} differs from ${reference!.strategy}'s ${ref.toPrecision(7)} by ${rel.toExponential(2)} (tolerance ${tolerance})`,
            )
          }
        }
      }
      for (const strategy of config.strategies) {
        if (!planned.some((k) => k.size === size && k.models === models && k.strategy === strategy)) continue // every W > N here
        if (!here.some((m) => m.strategy === strategy && m.status === 'ok')) {
          problems.push(`${strategy} has no finished measurement at ${size} rows × ${models} models`)
        }
      }
    }
  }
  for (const k of Object.keys(modelsTrained)) if (!Number.isFinite(modelsTrained[k])) modelsTrained[k] = 0
  return { sameWork: problems.length === 0, maxRelMseDiff: maxRel, tolerance, modelsTrained, problems }
}
