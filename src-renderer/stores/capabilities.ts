import { defineStore } from 'pinia'
import { computed, ref, shallowRef } from 'vue'
import type { BackendName, ConcreteBackend } from '@shared/contract/config'
import { BACKENDS } from '@shared/contract/config'
import type { Capabilities } from '@shared/contract/events'
import { findFamily } from '@shared/families'
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

  /** What `auto` resolves to here, when known. */
  const autoBackend = computed<ConcreteBackend | null>(() => {
    const a = caps.value?.autoBackend
    return a && a !== 'auto' && (BACKENDS as readonly string[]).includes(a) ? (a as ConcreteBackend) : null
  })

  const backendOptions = computed<BackendOption[]>(() => {
    const c = caps.value
    const auto = autoBackend.value
    const autoCap = c?.backends.find((b) => b.name === auto)
    const opts: BackendOption[] = [
      {
        value: 'auto',
        label: auto ? `auto → ${auto}` : 'auto',
        available: !c || c.backends.some((b) => b.available),
        detail: autoCap ? autoCap.detail : c ? 'no backend is available' : 'capabilities not loaded yet',
      },
    ]
    for (const name of BACKENDS) {
      if (name === 'auto') continue
      const cap = c?.backends.find((b) => b.name === name)
      opts.push({
        value: name,
        label: name,
        // unknown until capabilities arrive: let the service decide rather than block the user
        available: cap ? cap.available : !c,
        detail: cap ? cap.detail : c ? 'not reported by this build' : 'capabilities not loaded yet',
      })
    }
    return opts
  })

  /**
   * The choices for a model family: auto and the backends the family lists (xgboost only for trees),
   * plus the current choice when it is none of those, so the select shows it with its error.
   */
  function backendOptionsFor(kind: string, current?: BackendName): BackendOption[] {
    const family = findFamily(kind)
    if (!family) return backendOptions.value
    return backendOptions.value.filter((o) => o.value === 'auto' || o.value === current || (family.backends as readonly string[]).includes(o.value))
  }

  /** The concrete backend a config's backend choice runs on here, when known. */
  function resolve(backend: BackendName): ConcreteBackend | null {
    return backend === 'auto' ? autoBackend.value : backend
  }

  function option(backend: BackendName): BackendOption | undefined {
    return backendOptions.value.find((o) => o.value === backend)
  }

  return { caps, loading, error, load, autoBackend, backendOptions, backendOptionsFor, resolve, option }
})
