// What this machine can run, as the service reports it: the backends (available or why not), what
// `auto` is per family and why, the backend picker's choices, and Calibrate (auto timed again).
import { defineStore } from 'pinia'
import { ref, shallowRef } from 'vue'
import type { BackendName, ConcreteBackend } from '@shared/contract/config'
import type { Capabilities } from '@shared/contract/events'
import { allBackendNames, backendKnown, findFamily } from '@shared/families'
import { ORDER_RULE_TEXT } from '@shared/calibration'
import { chooseBridge } from '../bridge'
import { asErrorShape } from '../lib/errors'

export interface BackendOption {
  value: BackendName
  label: string
  available: boolean
  /** device when available, otherwise why not */
  detail: string
}

export const useCapabilitiesStore = defineStore('capabilities', () => {
  const caps = shallowRef<Capabilities | null>(null)
  const loading = ref(false)
  const error = ref<string | null>(null)
  /** the family whose calibration of `auto` is running (the Calibrate button); null when none */
  const calibrating = ref<string | null>(null)
  const calibrationError = ref<string | null>(null)

  async function load(): Promise<void> {
    loading.value = true
    error.value = null
    try {
      caps.value = await chooseBridge().capabilities()
    } catch (err) {
      error.value = asErrorShape(err).message
    } finally {
      loading.value = false
    }
  }

  /**
   * Times the family's backends now (the service's calibrate: seconds per backend), then reads the
   * capabilities again: `auto` and its reason are the new calibration's.
   */
  async function calibrate(kind: string): Promise<void> {
    calibrating.value = kind
    calibrationError.value = null
    try {
      await chooseBridge().calibrate({ family: kind })
      await load()
    } catch (err) {
      calibrationError.value = asErrorShape(err).message
    } finally {
      calibrating.value = null
    }
  }

  /** What `auto` resolves to here for a model family (each family has its own order), when known. */
  const autoBackend = (kind: string) => autoBackendIn(caps.value, kind)
  const backendOptionsFor = (kind: string, current?: BackendName) => backendOptionsIn(caps.value, kind, current)

  /** The concrete backend a config's backend choice runs on here for a family, when known. */
  function resolve(backend: BackendName, kind: string): ConcreteBackend | null {
    return backend === 'auto' ? autoBackend(kind) : backend
  }

  function option(backend: BackendName, kind: string): BackendOption | undefined {
    return backendOptionsFor(kind, backend).find((o) => o.value === backend)
  }

  const autoReason = (kind: string) => autoReasonIn(caps.value, kind)
  return { caps, loading, error, load, autoBackend, backendOptionsFor, resolve, option, calibrating, calibrationError, calibrate, autoReason }
})

function autoBackendIn(c: Capabilities | null, kind: string): ConcreteBackend | null {
  const a = c?.autoBackends?.[kind]
  return a && backendKnown(a) ? (a as ConcreteBackend) : null
}

/** Why `auto` is what it is for a family: the calibration's reason, the table's order, or that the first run will calibrate. */
function autoReasonIn(c: Capabilities | null, kind: string): string | null {
  if (!c) return null
  if (c.calibration.rule === 'order') return `auto follows ${ORDER_RULE_TEXT}`
  return (
    c.calibration.families[kind]?.reason ??
    'not calibrated on this machine yet: the first run with auto (or Calibrate) times each backend it may pick, a few seconds each'
  )
}

/**
 * The choices for a model family: auto (naming what it resolves to for this family) and the
 * backends the family lists, plus the current choice when it is none of those, so the select shows
 * it with its error.
 */
function backendOptionsIn(c: Capabilities | null, kind: string, current?: BackendName): BackendOption[] {
  const family = findFamily(kind)
  const auto = autoBackendIn(c, kind)
  const autoCap = c?.backends.find((b) => b.name === auto)
  const names = family ? family.backends.map((b) => b.name) : allBackendNames()
  if (current && current !== 'auto' && !names.includes(current)) names.push(current)
  return [
    {
      value: 'auto',
      label: auto ? `auto → ${auto}` : 'auto',
      available: !c || auto !== null,
      detail: c ? [autoCap ? autoCap.detail : 'no backend auto may pick is available', autoReasonIn(c, kind)].join(' — ') : 'capabilities not loaded yet',
    },
    ...names.map((name): BackendOption => {
      const cap = c?.backends.find((b) => b.name === name)
      return {
        value: name as BackendName,
        label: name,
        // unknown until capabilities arrive: let the service decide rather than block the user
        available: cap ? cap.available : !c,
        detail: cap ? cap.detail : c ? 'not reported by this build' : 'capabilities not loaded yet',
      }
    }),
  ]
}
