// Advice from a finished run: the service's advice for a target (API advise), and "verify this
// advice" (API verifyAdvice) as a normal live run through the run store, then the source run read
// again, which the service updated with the check. One verification at a time (one live run at a
// time). Store dependencies run one way: advice → run.
import { defineStore } from 'pinia'
import { shallowRef, watch } from 'vue'
import { adviseFrom, verificationConfig } from '@shared/advice'
import type { Advice, AdviceCheck, AdviceTarget } from '@shared/contract/advice'
import type { RunResult } from '@shared/contract/result'
import { chooseBridge } from '../bridge'
import { asErrorShape } from '../lib/errors'
import { useRunStore } from './run'

export interface Verification {
  /** the run whose advice is checked, as last read (with the check once stored) */
  source: RunResult
  target: AdviceTarget
  /** the verification run; null until it has started */
  verifyRunId: string | null
  state: 'starting' | 'running' | 'done' | 'failed'
  /** why it could not start, or ended without a check */
  error: string | null
  /** the stored check (predicted against measured), once done */
  check: AdviceCheck | null
}

export const useAdviceStore = defineStore('advice', () => {
  const run = useRunStore()
  const verification = shallowRef<Verification | null>(null)
  /** runs read again after a check was stored with them, by id: panels show the newest copy */
  const refreshed = shallowRef<ReadonlyMap<string, RunResult>>(new Map())

  /** The service's advice for a target (it refuses inside the Advice when the fits cannot be trusted). */
  function ask(runId: string, target: AdviceTarget): Promise<Advice> {
    return chooseBridge().advise({ runId, ...target })
  }

  /** Starts the verification run of the advice for `target` drawn from `source`. False when it did not start. */
  async function verify(source: RunResult, target: AdviceTarget): Promise<boolean> {
    if (run.busy) return false
    const v: Verification = { source, target, verifyRunId: null, state: 'starting', error: null, check: null }
    verification.value = v
    // the config as far as it is known here (the run-started event brings the service's own)
    const advice = adviseFrom(source, target)
    const cfg = advice.options.length ? verificationConfig(source.config, advice) : source.config
    const id = await run.startVerification({ runId: source.runId, ...target }, cfg)
    if (verification.value !== v) return false
    verification.value = id
      ? { ...v, verifyRunId: id, state: 'running' }
      : { ...v, state: 'failed', error: run.error?.message ?? 'the verification run could not start' }
    return id != null
  }

  /** The newest copy of a run read here (with its stored checks), else the run itself. */
  function latest(r: RunResult): RunResult {
    return refreshed.value.get(r.runId) ?? r
  }

  // the verification run ended: read its source again for the stored check
  watch(
    () => run.result,
    async (r) => {
      const v = verification.value
      if (!r || !v || v.verifyRunId == null || r.runId !== v.verifyRunId || v.state !== 'running') return
      try {
        const source = await chooseBridge().getRun({ runId: v.source.runId })
        refreshed.value = new Map(refreshed.value).set(source.runId, source)
        const check = source.adviceChecks?.find((c) => c.verifyRunId === r.runId) ?? null
        if (verification.value !== v) return
        verification.value = check
          ? { ...v, source, state: 'done', check }
          : { ...v, source, state: 'failed', error: `the verification run ended ${r.status}${r.error ? `: ${r.error}` : ''} and no check was stored` }
      } catch (err) {
        if (verification.value === v) verification.value = { ...v, state: 'failed', error: asErrorShape(err).message }
      }
    },
  )

  return { verification, refreshed, ask, verify, latest }
})
