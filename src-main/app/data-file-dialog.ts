// The desktop's open dialog for the user's own data (a CSV, TSV or Parquet file). It only picks a
// path: the service loads it (service/data-sets.ts), so the renderer never names a path itself.
// Injected into the service by the shell (app.ts → service-factory.ts), like the save dialogs.
import type { BrowserWindow, Dialog, OpenDialogOptions } from 'electron'
import { DATA_FILE_EXTENSIONS } from '@shared/contract/upload'

export const DATA_FILE_FILTERS: OpenDialogOptions['filters'] = [
  { name: 'Data files (CSV, TSV, Parquet)', extensions: [...DATA_FILE_EXTENSIONS] },
  { name: 'All files', extensions: ['*'] },
]

export interface DataFileDialogOptions {
  /** Electron's dialog module (looked up when used) */
  dialog: () => Pick<Dialog, 'showOpenDialog'>
  /** the app window the dialog belongs to (modal), or null */
  getWindow: () => BrowserWindow | null
  /** the folder the dialog opens in */
  defaultDir?: () => string
}

/** Asks for one data file; its path, or null when the user cancelled. */
export function dataFilePicker(options: DataFileDialogOptions): () => Promise<string | null> {
  return async () => {
    const dialogOptions: OpenDialogOptions = {
      title: 'Open a data file',
      filters: DATA_FILE_FILTERS,
      properties: ['openFile'],
      ...(options.defaultDir ? { defaultPath: options.defaultDir() } : {}),
    }
    const win = options.getWindow()
    const res = win ? await options.dialog().showOpenDialog(win, dialogOptions) : await options.dialog().showOpenDialog(dialogOptions)
    return res.canceled || res.filePaths.length === 0 ? null : res.filePaths[0]
  }
}
