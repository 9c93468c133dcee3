// The service's side of the user's own data sets: the recent list and one set's info from the store's
// data cache (src-main/data owns parsing and the cache), the desktop's open dialog (injected by the
// Electron shell, which alone may show one), loading a file a shell already has on disk (browser
// mode's upload, which arrives in uploadDir()), and removing a set (its cache entry and its uploaded
// copy). Kept apart from bench-service.ts, which only delegates here.
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { DataSetInfo } from '@shared/contract'
import { TrainpoolError } from '@shared/contract'
import { UPLOAD_PATH } from '@shared/contract/upload'
import { dataSetInfo, listDataSets, loadDataFile, removeFromCache } from '../data'
import { UPLOADS_DIR } from '../store/run-store'

export interface DataSetsOptions {
  /** the store's folder (its data cache is <dir>/.datasets); null: runs kept in memory, no cache */
  storeDir: string | null
  /** which shell asks: only the desktop can show an open dialog */
  shell: 'electron' | 'browser' | 'cli'
  /** the desktop's open dialog: the chosen file's path, null when cancelled (Electron only) */
  pickFile?: () => Promise<string | null>
}

export class DataSets {
  constructor(private readonly options: DataSetsOptions) {}

  /** newest first; an empty list when there is no store */
  async list(): Promise<DataSetInfo[]> {
    return this.options.storeDir === null ? [] : listDataSets(this.options.storeDir)
  }

  async info(sha256: string): Promise<DataSetInfo> {
    return dataSetInfo(this.storeDir(), sha256)
  }

  /** The desktop's open dialog, then the chosen file loaded into the cache; null when cancelled. */
  async choose(): Promise<DataSetInfo | null> {
    const pick = this.options.pickFile
    if (!pick) {
      const how =
        this.options.shell === 'browser'
          ? `in browser mode upload the file instead (the config panel's Upload button, or POST ${UPLOAD_PATH}?name=FILE with the file as the body)`
          : 'on the command line name the file instead (trainpool bench --data FILE)'
      throw new TrainpoolError('invalid-input', `chooseDataFile opens a file dialog, which only the desktop app has: ${how}`)
    }
    const path = await pick()
    return path === null ? null : this.load(path)
  }

  /** Loads a file this process can read (a dialog's choice, an upload's file) into the cache. */
  async load(path: string): Promise<DataSetInfo> {
    return loadDataFile(path, this.storeDir())
  }

  /** where browser mode's uploads arrive: <store>/.uploads (one folder per file, named by its sha256); null without a store */
  uploadDir(): string | null {
    return this.options.storeDir === null ? null : join(this.options.storeDir, UPLOADS_DIR)
  }

  /** Removes the set from the cache and its uploaded copy, if it was uploaded (the caller checks it is not in use). */
  async remove(sha256: string): Promise<{ deleted: true }> {
    await removeFromCache(this.storeDir(), sha256)
    await fs.rm(join(this.uploadDir()!, sha256), { recursive: true, force: true })
    return { deleted: true }
  }

  private storeDir(): string {
    if (this.options.storeDir === null) {
      throw new TrainpoolError('invalid-input', 'data sets need a run store (their cache lives in it): this service keeps runs in memory only')
    }
    return this.options.storeDir
  }
}
