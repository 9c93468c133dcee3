// Same work, proven: every strategy trained every model, and model i's final test MSE agrees
// across strategies (model i is the same computation everywhere: same init seed, same data, same
// batch order). Where a family's training is exact (trees), model i's fingerprint must match too.
// The tolerance is the family's. Backends side by side: the same within each backend, and across
// backends as the family says two backends compare (family.crossBackend: bit for bit, a looser
// tolerance, or not one by one — said in the notes). A disagreement fails the run, loudly, naming
// the measurements or the pair of backends.
import type { BenchConfig, Measurement, Verification } from '@shared/contract'
import { familyOf } from '@shared/families'
import { expandPlan } from '@shared/plan'

export function verify(config: BenchConfig, measurements: readonly Measurement[], tolerance = familyOf(config.model).sameWorkTolerance): Verification {
  const family = familyOf(config.model)
  const problems: string[] = []
  const notes: string[] = []
  const modelsTrained: Record<string, number> = {}
  let maxRel = 0
  let maxCross: number | undefined
  const planned = expandPlan(config)
  const agree = (rel: number) => {
    if (rel > maxRel) maxRel = rel
  }
  for (const size of config.sizes) {
    for (const models of config.models) {
      const atSize = measurements.filter((m) => m.size === size && m.models === models)
      const references: Measurement[] = []
      for (const backend of [...new Set(planned.map((k) => k.backend))]) {
        const here = atSize.filter((m) => m.backend === backend)
        const on = backend ? ` on ${backend}` : ''
        const reference = here.find((m) => m.status === 'ok' && m.strategy === 'sequential') ?? here.find((m) => m.status === 'ok')
        if (reference) references.push(reference)
        const refMse = new Map(reference?.perModel.map((p) => [p.index, p.testMse]) ?? [])
        const refFingerprint = new Map(reference?.perModel.map((p) => [p.index, p.fingerprint]) ?? [])
        for (const m of here) {
          const where = `${m.strategy} W=${m.workers}${on} repeat ${m.repeat} at ${size} rows × ${models} models`
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
            const rel = relDiff(p.testMse, ref)
            agree(rel)
            if (rel > tolerance) {
              problems.push(
                `${where}: model ${p.index} test MSE ${p.testMse.toPrecision(7)} differs from ${reference!.strategy}'s ${ref.toPrecision(7)} by ${rel.toExponential(2)} (tolerance ${tolerance})`,
              )
            }
          }
        }
        for (const strategy of config.strategies) {
          if (!planned.some((k) => k.size === size && k.models === models && k.strategy === strategy && k.backend === backend)) continue // every W > N here
          if (!here.some((m) => m.strategy === strategy && m.status === 'ok')) {
            problems.push(`${strategy}${on} has no finished measurement at ${size} rows × ${models} models`)
          }
        }
      }
      // across backends: each against the first backend's reference
      const [base, ...others] = references
      for (const other of others) {
        const pair = `${base.backend} vs ${other.backend} at ${size} rows × ${models} models`
        const rule = family.crossBackend(base.backend!, other.backend!, config)
        if ('incomparable' in rule) {
          notes.push(`${pair}: not compared model by model: ${rule.incomparable}`)
          continue
        }
        const theirs = new Map(other.perModel.map((p) => [p.index, p]))
        for (const p of base.perModel) {
          const q = theirs.get(p.index)
          if (!q) continue
          if (rule.fingerprints && p.fingerprint !== undefined && q.fingerprint !== p.fingerprint) {
            problems.push(`${pair}: model ${p.index} differs (fingerprint ${q.fingerprint ?? 'missing'} vs ${p.fingerprint}): these backends must train the same model`)
            continue
          }
          const rel = relDiff(q.testMse, p.testMse)
          maxCross = Math.max(maxCross ?? 0, rel)
          if (rel > rule.tolerance) {
            problems.push(`${pair}: model ${p.index} test MSE ${q.testMse.toPrecision(7)} vs ${p.testMse.toPrecision(7)} differs by ${rel.toExponential(2)} (cross-backend tolerance ${rule.tolerance})`)
          }
        }
      }
    }
  }
  for (const k of Object.keys(modelsTrained)) if (!Number.isFinite(modelsTrained[k])) modelsTrained[k] = 0
  return { sameWork: problems.length === 0, maxRelMseDiff: maxRel, tolerance, modelsTrained, problems, ...(notes.length ? { notes } : {}), ...(maxCross !== undefined ? { maxCrossBackendRelMseDiff: maxCross } : {}) }
}

function relDiff(a: number, ref: number): number {
  return Math.abs(a - ref) / Math.max(Math.abs(ref), 1e-12)
}
