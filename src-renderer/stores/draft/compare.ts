// What the run compares: its strategies, and backends side by side (two or more ticked make
// draft.backend a list, in the family's order: the order the plan runs them).
import { computed, type ComputedRef } from 'vue'
import { backendsOf, type BenchConfig, type ConcreteBackend } from '@shared/contract/config'
import type { ModelFamily } from '@shared/families'

export function useComparedChoices(draft: BenchConfig, family: ComputedRef<ModelFamily>, touched: () => void) {
  function toggleStrategy(s: BenchConfig['strategies'][number], on: boolean) {
    const has = draft.strategies.includes(s)
    if (on && !has) draft.strategies.push(s)
    if (!on && has) draft.strategies.splice(draft.strategies.indexOf(s), 1)
    touched()
  }

  /** Backends side by side: the concrete backends the draft runs on (none for auto). */
  const comparedBackends = computed<ConcreteBackend[]>(() => backendsOf(draft).filter((b): b is ConcreteBackend => b !== 'auto'))

  /** Ticks or unticks a backend to compare: two or more ticked make draft.backend their list, one ticked that backend alone, none auto. */
  function setCompared(name: ConcreteBackend, on: boolean) {
    const now = new Set(comparedBackends.value)
    if (on) now.add(name)
    else now.delete(name)
    const order = family.value.backends.map((b) => b.name as string)
    const list = [...now].sort((a, b) => {
      const [ia, ib] = [order.indexOf(a), order.indexOf(b)]
      return (ia < 0 ? order.length : ia) - (ib < 0 ? order.length : ib)
    })
    draft.backend = list.length >= 2 ? list : (list[0] ?? 'auto')
    touched()
  }

  return { toggleStrategy, comparedBackends, setCompared }
}
