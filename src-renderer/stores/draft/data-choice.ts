// The user's own data in the draft (draft.data: which file, target, features, impute), and what is
// wrong with that choice, in the service's words (src-shared/data-check.ts: the one data check).
// The files themselves (recent list, preview, upload) are the dataSets store's.
import { computed, type ComputedRef, type Ref, watch } from 'vue'
import type { BenchConfig } from '@shared/contract/config'
import type { DataSetInfo, ImputeMode } from '@shared/contract/dataset'
import type { FieldIssue } from '@shared/vocabulary/errors'
import { checkDataChoice, type DataCheck } from '@shared/data-check'
import { skippedTextColumns } from '@shared/data-columns'
import type { ModelFamily } from '@shared/families'
import type { useDataSetsStore } from '../dataSets'

/** Where a run's rows come from. */
export type DataSourceKind = 'generated' | 'file'

export interface DataChoiceDeps {
  draft: BenchConfig
  source: Ref<DataSourceKind>
  family: ComputedRef<ModelFamily>
  dataSets: ReturnType<typeof useDataSetsStore>
  /** sets a number box and the draft together (the feature count follows the file's columns) */
  showNumber: (field: 'features', value: number) => void
  /** one data size of this many rows */
  setOnlySize: (rows: number) => void
  touched: () => void
}

export function useDataChoice(deps: DataChoiceDeps) {
  const check = dataChoiceCheck(deps)
  featuresFollowTheFile(deps, check.featureColumns)

  /** "All rows": one data size, every row with a target value. */
  function useAllRows() {
    const n = check.usable.value
    if (n) deps.setOnlySize(n)
  }

  return { ...fileEdits(deps), ...columnEdits(deps), ...check, useAllRows }
}

/** Which rows: generated, or a file of the user's. */
function fileEdits({ draft, source, dataSets, touched }: DataChoiceDeps) {
  /** Generated or file: switching to file uses the data set on show (if any); back to generated drops draft.data. */
  function setSource(kind: DataSourceKind) {
    source.value = kind
    if (kind === 'generated') delete draft.data
    else if (dataSets.current && !draft.data) useDataSet(dataSets.current)
    touched()
  }

  /**
   * Trains on `info`: its last column is the target (a file's usual layout) when it can be one — a
   * numeric column, or a text column of class labels (yes/no) — else its last numeric column; every
   * other numeric column a feature. The same file again keeps the columns already picked.
   */
  function useDataSet(info: DataSetInfo) {
    source.value = 'file'
    dataSets.current = info
    if (draft.data?.sha256 === info.sha256) return touched()
    const last = info.columns[info.columns.length - 1]
    const numeric = info.columns.filter((c) => c.type === 'numeric')
    const target = (last && (last.type === 'numeric' || last.levels) ? last.name : numeric[numeric.length - 1]?.name) ?? last?.name ?? ''
    draft.data = { sha256: info.sha256, name: info.name, target, features: null, exclude: [], impute: 'none' }
    touched()
  }

  /** The data set was removed from the cache: the draft stops naming it (still on "your file", to pick another). */
  function forgetDataSet(sha256: string) {
    if (draft.data?.sha256 !== sha256) return
    delete draft.data
    touched()
  }

  return { setSource, useDataSet, forgetDataSet }
}

/** The file's columns: its target, its features, imputing missing values. */
function columnEdits({ draft, dataSets, touched }: DataChoiceDeps) {
  /** The target column; it stops being a feature (and is no longer excluded: it is not one). */
  function setDataTarget(name: string) {
    if (!draft.data) return
    draft.data.target = name
    draft.data.exclude = draft.data.exclude.filter((c) => c !== name)
    touched()
  }

  /** A numeric column in or out of the features (the default is every one but the target). */
  function setFeatureUsed(name: string, used: boolean) {
    const d = draft.data
    if (!d) return
    // an explicit feature list (a config from the CLI) becomes the default rule plus exclusions
    if (d.features) {
      const info = dataSets.current
      const all = info ? info.columns.filter((c) => c.type === 'numeric' && c.name !== d.target).map((c) => c.name) : d.features
      d.exclude = all.filter((c) => !d.features!.includes(c))
      d.features = null
    }
    d.exclude = used ? d.exclude.filter((c) => c !== name) : [...new Set([...d.exclude, name])]
    touched()
  }

  function setImpute(mode: ImputeMode) {
    if (!draft.data) return
    draft.data.impute = mode
    touched()
  }

  return { setDataTarget, setFeatureUsed, setImpute }
}

/** What the data choice comes to: the service's own check of it (its column choice, rows, missing values and the task its target gives), and what the panel says from it. */
function dataChoiceCheck({ draft, source, family, dataSets }: DataChoiceDeps) {
  /** The service's own check of the data choice; null until the file's info is here. */
  const dataCheck = computed<DataCheck | null>(() => {
    const d = draft.data
    const info = dataSets.current
    if (!d || !info || info.sha256 !== d.sha256) return null
    return checkDataChoice({ info, data: d, family: family.value, sizes: draft.sizes, objective: draft.objective, metric: draft.metric })
  })

  /** Text columns the default feature rule leaves out (said next to the features). */
  const textColumnsLeftOut = computed<string[]>(() => {
    const d = draft.data
    const info = dataSets.current
    return d && info && info.sha256 === d.sha256 ? skippedTextColumns(info, d).map((c) => c.name) : []
  })

  /** What the file choice gets wrong (the schema cannot know the file's columns or row count). */
  const dataIssues = computed<FieldIssue[]>(() => {
    if (source.value !== 'file') return []
    if (!draft.data) return [{ field: 'data', message: 'Data file: choose a file (Open…, Upload, or one of the recent ones), or use generated data' }]
    return dataCheck.value?.refusals ?? []
  })

  return {
    /** the service's own check of the data choice (the task the target gives included); null until the file's info is here */
    dataCheck,
    /** The feature columns the run will use (none while the choice has a problem). */
    featureColumns: computed<string[]>(() => dataCheck.value?.choice?.features.map((c) => c.name) ?? []),
    textColumnsLeftOut,
    /** Missing values among the feature columns used (rows missing the target are left out, not imputed). */
    missingInUse: computed<number>(() => dataCheck.value?.withMissing.reduce((n, col) => n + col.missing, 0) ?? 0),
    /** Rows a run can use (those with a target value): the most a data size may be; null until a file's columns are chosen. */
    usable: computed<number | null>(() => dataCheck.value?.usableRows ?? null),
    /** The family cannot train on missing values (the MLP): they must be imputed, or the run is refused. */
    refusesMissing: computed(() => (family.value.userData?.missingValues ?? 'refuse') === 'refuse'),
    dataIssues,
  }
}

/** The config's feature count follows the file's columns (the estimate counts them; the service sets the same). */
function featuresFollowTheFile({ draft, source, showNumber }: DataChoiceDeps, featureColumns: ComputedRef<string[]>) {
  // the generated data's own count, given back when the source is generated again
  let generatedFeatures: number | null = null
  watch(
    () => [source.value, featureColumns.value.length] as const,
    ([kind, n]) => {
      if (kind === 'file' && n > 0) {
        generatedFeatures ??= draft.features
        showNumber('features', n)
      } else if (kind === 'generated' && generatedFeatures !== null) {
        showNumber('features', generatedFeatures)
        generatedFeatures = null
      }
    },
    { immediate: true },
  )
}
