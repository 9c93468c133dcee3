// How a model set is searched, in the draft (issue 39): grid or successive halving (its factor and
// first rung), and early stopping (its patience) with the validation fraction that holds rows out
// when there are no folds. Each box keeps its text as typed; the draft holds the parsed value (NaN
// when it is not a number, so the schema names the field). What may be combined is the schema's
// (contract/config.ts, contract/halving.ts halvingProblems): the panel only shows its refusals.
import { computed, type ComputedRef, reactive } from 'vue'
import type { BenchConfig } from '@shared/contract/config'
import { DEFAULT_HALVING_FACTOR, defaultMinRounds, describeRungs, halvingOf, halvingRungs, type SearchMethod } from '@shared/contract/halving'
import { configurationCount } from '@shared/contract/model-set'
import type { ModelFamily } from '@shared/families'
import { numberOf } from '@shared/vocabulary/fields'

/** The search boxes, by the config path their issues name. */
export type SearchBox = 'search.factor' | 'search.minRounds' | 'earlyStopping' | 'validation'

export interface SearchChoiceDeps {
  draft: BenchConfig
  family: ComputedRef<ModelFamily>
  touched: () => void
}

export function useSearchChoice({ draft, family, touched }: SearchChoiceDeps) {
  /** what each box shows, as typed (empty: its default, or off) */
  const searchText = reactive<Record<SearchBox, string>>({ 'search.factor': '', 'search.minRounds': '', earlyStopping: '', validation: '' })

  /** Every box from the draft (a new draft: a preset, a run again, a restored one). */
  function syncText() {
    const halving = halvingOf(draft)
    searchText['search.factor'] = halving ? String(halving.factor) : ''
    searchText['search.minRounds'] = halving?.minRounds === undefined ? '' : String(halving.minRounds)
    searchText.earlyStopping = draft.earlyStopping === undefined ? '' : String(draft.earlyStopping)
    searchText.validation = draft.validation === undefined ? '' : String(draft.validation)
  }

  const searchMethod = computed<SearchMethod>(() => draft.search?.method ?? 'grid')

  /** Grid (the search left out, as a config without one reads) or halving with the factor and first rung typed. */
  function setSearchMethod(method: SearchMethod) {
    if (method === 'grid') delete draft.search
    else {
      const factor = searchText['search.factor'].trim() === '' ? DEFAULT_HALVING_FACTOR : numberOf(searchText['search.factor'], 'integer')
      const minRounds = searchText['search.minRounds'].trim() === '' ? undefined : numberOf(searchText['search.minRounds'], 'integer')
      draft.search = { method: 'halving', factor, ...(minRounds === undefined ? {} : { minRounds }) }
      searchText['search.factor'] = String(factor)
    }
    touched()
  }

  /** A box typed into: empty leaves its field out (the default factor or first rung; early stopping off; no validation rows). */
  function setSearchNumber(box: SearchBox, typed: string) {
    searchText[box] = typed
    const value = typed.trim() === '' ? undefined : numberOf(typed, box === 'validation' ? 'real' : 'integer')
    if (box === 'earlyStopping' || box === 'validation') {
      if (value === undefined) delete draft[box]
      else draft[box] = value
    } else if (draft.search?.method === 'halving') {
      const key = box === 'search.factor' ? 'factor' : 'minRounds'
      if (value !== undefined) draft.search[key] = value
      else if (key === 'minRounds') delete draft.search.minRounds
      else draft.search.factor = DEFAULT_HALVING_FACTOR
    }
    touched()
  }

  /** The set's configurations (1 without a set, or while a box of the set does not read). */
  const configurations = computed(() => {
    if (!draft.set) return 1
    const n = configurationCount(draft.set)
    return Number.isInteger(n) ? n : 1
  })
  /** The search choice is offered beside a set of several configurations, and stays while halving is asked (so its refusal shows). */
  const searchOffered = computed(() => configurations.value >= 2 || searchMethod.value === 'halving')

  /** The first rung auto picks (contract/halving.ts defaultMinRounds), for the box's placeholder; null when the family has no rounds. */
  const defaultFirstRung = computed(() => {
    const maxRounds = family.value.maxRounds
    const halving = halvingOf(draft)
    if (!maxRounds || !halving || !Number.isInteger(halving.factor) || halving.factor < 2) return null
    const rounds = maxRounds(draft.model as never)
    return Number.isInteger(rounds) && rounds >= 1 ? defaultMinRounds(rounds, configurations.value, halving.factor) : null
  })

  /** The rungs the search will run, in words: "6 configurations × 2 rounds → 2 × 6 rounds → 1 × 20 rounds"; null while a box does not read. */
  const rungsText = computed(() => {
    const maxRounds = family.value.maxRounds
    const halving = halvingOf(draft)
    if (!maxRounds || !halving || configurations.value < 2) return null
    const rounds = maxRounds(draft.model as never)
    const first = halving.minRounds ?? defaultFirstRung.value
    const sane = (n: number | null | undefined, max = Infinity): n is number => n != null && Number.isInteger(n) && n >= 1 && n <= max
    if (!sane(rounds) || !sane(first, rounds) || !sane(halving.factor) || halving.factor < 2) return null
    const rungs = halvingRungs(rounds, configurations.value, halving.factor, first)
    return describeRungs(rungs.map((r) => ({ rounds: r.rounds, configurations: Array.from({ length: r.configurations }, (_, c) => c) })))
  })

  return { searchText, syncText, searchMethod, setSearchMethod, setSearchNumber, searchOffered, defaultFirstRung, rungsText }
}
