// The user's own data sets as the config panel sees them: the recent list (the store's data cache),
// the one in use (its DataSetInfo), the two ways a file comes in — the desktop's open dialog or
// browser mode's upload (lib/upload.ts) — and removing one from the cache. Which columns a run uses
// is the config's (draft.data); this store only knows the files. Depends on no other store.
import { defineStore } from 'pinia'
import { type Ref, ref, shallowRef } from 'vue'
import type { DataSetInfo } from '@shared/contract/dataset'
import { chooseBridge } from '../bridge'
import { asErrorShape } from '../lib/errors'
import { type Upload, type UploadProgress, uploadDataFile } from '../lib/upload'

export const useDataSetsStore = defineStore('dataSets', () => {
  /** the cached data sets, newest first */
  const recent = shallowRef<DataSetInfo[]>([])
  /** the data set the config names (or was just loaded), with its preview */
  const current = shallowRef<DataSetInfo | null>(null)
  /** a dialog, an upload or a lookup is under way */
  const busy = ref(false)
  const error = ref<string | null>(null)
  const list: DataSetList = { recent, current, busy, error }

  async function refresh(): Promise<void> {
    try {
      recent.value = await chooseBridge().dataSets()
    } catch (err) {
      error.value = `Could not list the recent data sets: ${asErrorShape(err).message}`
    }
  }

  function clear(): void {
    current.value = null
    error.value = null
  }

  const { upload, choose, send, cancelUpload } = fileIntake(list)
  return { recent, current, busy, upload, error, refresh, choose, send, cancelUpload, ...cacheLookups(list), clear }
})

/** What the store's parts share: the list, the set in use, busy and the last error. */
interface DataSetList {
  recent: Ref<DataSetInfo[]>
  current: Ref<DataSetInfo | null>
  busy: Ref<boolean>
  error: Ref<string | null>
}

/** A set just loaded: the one in use, first in the list. */
function loaded({ recent, current }: DataSetList, info: DataSetInfo): DataSetInfo {
  current.value = info
  recent.value = [info, ...recent.value.filter((d) => d.sha256 !== info.sha256)]
  return info
}

/** The two ways a file comes in: the desktop's open dialog (in main) and browser mode's upload. */
function fileIntake(list: DataSetList) {
  const { busy, error } = list
  /** the upload in flight: its file name and bytes sent so far */
  const upload = shallowRef<({ name: string } & UploadProgress) | null>(null)
  let inFlight: Upload | null = null

  /** Desktop: the open dialog in main; the loaded set, or null when the user cancelled. */
  async function choose(): Promise<DataSetInfo | null> {
    busy.value = true
    error.value = null
    try {
      const info = await chooseBridge().chooseDataFile()
      return info ? loaded(list, info) : null
    } catch (err) {
      error.value = asErrorShape(err).message
      return null
    } finally {
      busy.value = false
    }
  }

  /** Browser mode: POSTs the file to the server (progress in `upload`); the loaded set, or null on failure or cancel. */
  async function send(file: File): Promise<DataSetInfo | null> {
    busy.value = true
    error.value = null
    upload.value = { name: file.name, loaded: 0, total: file.size }
    try {
      inFlight = uploadDataFile(file, (p) => (upload.value = { name: file.name, ...p }))
      return loaded(list, await inFlight.done)
    } catch (err) {
      error.value = `${file.name}: ${(err as Error).message}`
      return null
    } finally {
      inFlight = null
      upload.value = null
      busy.value = false
    }
  }

  function cancelUpload(): void {
    inFlight?.abort()
  }

  return { upload, choose, send, cancelUpload }
}

/** A set looked up in the store's cache, and removed from it. */
function cacheLookups({ recent, current, busy, error }: DataSetList) {
  /** The set with this sha256: from the recent list, else asked of the service; null (and an error) when gone. */
  async function select(sha256: string): Promise<DataSetInfo | null> {
    const known = recent.value.find((d) => d.sha256 === sha256) ?? (current.value?.sha256 === sha256 ? current.value : null)
    if (known) return (current.value = known)
    busy.value = true
    try {
      return (current.value = await chooseBridge().dataSetInfo({ sha256 }))
    } catch (err) {
      error.value = `The data set ${sha256.slice(0, 12)}… is not in the cache any more: ${asErrorShape(err).message}`
      current.value = null
      return null
    } finally {
      busy.value = false
    }
  }

  /** Removes the set from the store's cache; false, with the service's reason in `error`, when refused (e.g. a run trains on it). */
  async function remove(sha256: string): Promise<boolean> {
    busy.value = true
    error.value = null
    try {
      await chooseBridge().deleteDataSet({ sha256 })
      recent.value = recent.value.filter((d) => d.sha256 !== sha256)
      if (current.value?.sha256 === sha256) current.value = null
      return true
    } catch (err) {
      error.value = `Could not remove the data set: ${asErrorShape(err).message}`
      return false
    } finally {
      busy.value = false
    }
  }

  return { select, remove }
}
