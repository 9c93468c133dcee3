import { defineStore } from 'pinia'
import { ref, shallowRef } from 'vue'
import type { BackendName, ConcreteBackend } from '@shared/contract/config'
import type { Capabilities } from '@shared/contract/events'
import { allBackendNames, backendKnown, findFamily } from '@shared/families'
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

  /** What `auto` resolves to here for a model family (each family has its own order), when known. */
  function autoBackend(kind: string): ConcreteBackend | null {
    const a = caps.value?.autoBackends?.[kind]
    return a && backendKnown(a) ? (a as ConcreteBackend) : null
  }

  /**
   * The choices for a model family: auto (naming what it resolves to for this family) and the
   * backends the family lists, plus the current choice when it is none of those, so the select shows
   * it with its error.
   */
  function backendOptionsFor(kind: string, current?: BackendName): BackendOption[] {
    const c = caps.value
    const family = findFamily(kind)
    const auto = autoBackend(kind)
    const autoCap = c?.backends.find((b) => b.name === auto)
    const names = family ? family.backends.map((b) => b.name) : allBackendNames()
    if (current && current !== 'auto' && !names.includes(current)) names.push(current)
    return [
      {
        value: 'auto',
        label: auto ? `auto → ${auto}` : 'auto',
        available: !c || auto !== null,
        detail: autoCap ? autoCap.detail : c ? 'no backend auto may pick is available' : 'capabilities not loaded yet',
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

  /** The concrete backend a config's backend choice runs on here for a family, when known. */
  function resolve(backend: BackendName, kind: string): ConcreteBackend | null {
    return backend === 'auto' ? autoBackend(kind) : backend
  }

  function option(backend: BackendName, kind: string): BackendOption | undefined {
    return backendOptionsFor(kind, backend).find((o) => o.value === backend)
  }

  return { caps, loading, error, load, autoBackend, backendOptionsFor, resolve, option }
})
