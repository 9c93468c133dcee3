// The presets in the draft: applying one (only its workload; where and how to run stay), the preset
// a config still is once edited, and the config to send under that name.
import { computed, type ComputedRef } from 'vue'
import type { BenchConfig, PresetName } from '@shared/contract/config'
import { DEFAULT_CONFIG, PRESETS, presetConfig, presetDescription } from '@shared/contract/config'

/** A deep copy: the draft never shares objects with a preset, a run's config or the parsed config. */
export function copyConfig<T>(c: T): T {
  return JSON.parse(JSON.stringify(c)) as T
}

/**
 * Fields that say where and how to run, not what to train: changing them keeps a preset's name
 * (smoke on wasm is still "smoke"); any other field is the workload and makes the config custom.
 */
export const NON_WORKLOAD_FIELDS = ['backend', 'failurePolicy', 'launcher'] as const satisfies readonly (keyof BenchConfig)[]

/** Same workload: every field but the preset name and the non-workload fields agrees. */
function sameWorkload(a: BenchConfig, b: BenchConfig): boolean {
  const strip = (c: BenchConfig) => {
    const r: Partial<BenchConfig> = { ...c }
    delete r.preset
    for (const f of NON_WORKLOAD_FIELDS) delete r[f]
    return JSON.stringify(r)
  }
  return strip(a) === strip(b)
}

/** The preset a config still is ("custom" once its workload differs from the named preset's). */
export function effectivePreset(c: BenchConfig): BenchConfig['preset'] {
  return c.preset !== 'custom' && sameWorkload(c, presetConfig(c.preset, { model: { kind: c.model.kind } })) ? c.preset : 'custom'
}

/** `parsed`: the draft as the schema read it (null when invalid); `replace`: the draft becomes a config. */
export function useDraftPresets(draft: BenchConfig, parsed: ComputedRef<BenchConfig | null>, replace: (c: BenchConfig) => void) {
  /**
   * A preset's workload; where and how to run (backend, failure policy, launcher) and the data file
   * stay as they were, and with the file what to learn from it (objective, metric). Generated data
   * takes the preset's target, whose objective it is: an objective or metric asked of another target would contradict it.
   */
  function applyPreset(name: PresetName) {
    const { data, launcher, objective, metric } = draft
    replace({
      ...presetConfig(name, { backend: draft.backend, failurePolicy: draft.failurePolicy, model: { kind: draft.model.kind } }),
      ...(data ? { data, ...(objective ? { objective } : {}), ...(metric ? { metric } : {}) } : {}),
      ...(launcher ? { launcher } : {}),
    })
  }

  function reset() {
    replace(DEFAULT_CONFIG)
  }

  /** The config to send: preset becomes "custom" once the workload differs from the named preset. */
  const config = computed<BenchConfig | null>(() => {
    if (!parsed.value) return null
    const c = copyConfig(parsed.value)
    c.preset = effectivePreset(c)
    return c
  })

  /** What the preset picker shows: the draft's preset while its workload still matches, else custom. */
  const shownPreset = computed<BenchConfig['preset']>(() => {
    if (draft.preset === 'custom') return 'custom'
    return config.value ? config.value.preset : 'custom'
  })

  // a preset's description names the current family's tweak ("1 epoch", "10 rounds")
  const presets = computed(() =>
    Object.entries(PRESETS).map(([name, p]) => ({ name: name as PresetName, ...p, description: presetDescription(name as PresetName, draft.model.kind) })),
  )

  return { applyPreset, reset, config, shownPreset, presets }
}
