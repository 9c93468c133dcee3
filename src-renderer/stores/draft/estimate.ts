// The panel's time and memory estimate of the draft: the shared estimator (src-shared/estimate.ts,
// the service's own) on the backend the capabilities say `auto` is for the draft's family, at the
// speeds this machine's calibration measured where it has them, its time scaled by the latest
// measured run on that backend and family when there is one.
import { computed, type ComputedRef } from 'vue'
import { type BenchConfig, firstBackend } from '@shared/contract/config'
import { estimateRun, type RunEstimate } from '@shared/estimate'
import { type Calibration, calibrationFrom } from '../../lib/calibration'
import type { useCapabilitiesStore } from '../capabilities'
import type { useRunStore } from '../run'

export function useDraftEstimate(config: ComputedRef<BenchConfig | null>, caps: ReturnType<typeof useCapabilitiesStore>, run: ReturnType<typeof useRunStore>) {
  /**
   * The measured speed the time estimate is calibrated on: the latest finished run shown here (the
   * run just finished, or the last one found on opening), on the backend and family it ran.
   */
  /** this machine's calibration of `auto` (measured speeds per backend), once the capabilities are here */
  const timeOptions = computed(() => ({ cpuCount: caps.caps?.cpuCount, calibration: caps.caps?.calibration.families }))
  const calibration = computed<Calibration | null>(() => calibrationFrom(run.result, timeOptions.value) ?? calibrationFrom(run.lastResult, timeOptions.value))

  /** The backend the config runs on, once the capabilities are here (auto resolved per family). */
  const backendOf = (c: BenchConfig) => (caps.caps ? caps.resolve(firstBackend(c), c.model.kind) : null)

  /** the estimate's time is scaled by a measured run (else it is the assumed speed) */
  const calibrated = computed(() => {
    const c = config.value
    const cal = calibration.value
    return !!c && !!cal && cal.backend === backendOf(c) && cal.kind === c.model.kind
  })

  /** Counts and memory at once; time only once the capabilities say which backend and how many cores. */
  const estimate = computed<RunEstimate | null>(() => {
    const c = config.value
    if (!c) return null
    const e = estimateRun(c, backendOf(c), timeOptions.value)
    if (e.totalMs == null || !calibrated.value) return e
    return { ...e, totalMs: e.totalMs * calibration.value!.factor }
  })

  return { estimate, calibrated }
}
