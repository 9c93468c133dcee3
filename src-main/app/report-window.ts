// Desktop PDF reports and exports: the report page (report.html, a second renderer entry) in a
// hidden sandboxed window, handed the run after load, printed with printToPDF once it signals it
// is ready (polled: hidden windows may throttle requestAnimationFrame and timers in the page, but
// executeJavaScript from main still answers); saved where the user picks in a save dialog.
import { promises as fs } from 'node:fs'
import { dirname, join } from 'node:path'
import type { BrowserWindow as BrowserWindowType, BrowserWindowConstructorOptions, Dialog, SaveDialogOptions } from 'electron'
import {
  exportFileName,
  TrainpoolError,
  type ExportedFile,
  type ExportFormat,
  type ParsedRequest,
  type PdfReport,
  type RunResult,
  type SavedModel,
} from '@shared/contract'
import { PDF_MARGINS_MM, footerTemplate } from '../report/render-pdf'
import type { BenchServiceApi } from '../service/types'
import type { AppPage } from './app-page'

type WindowCtor = new (options: BrowserWindowConstructorOptions) => BrowserWindowType

/** The report page next to the app page: out/renderer/report.html, or the dev server's /report.html. */
export function reportPageLocation(page: AppPage): { file: string } | { url: string } {
  if (page.kind === 'file' && page.filePath) return { file: join(dirname(page.filePath), 'report.html') }
  return { url: new URL('report.html', page.url).href }
}

export function reportWindowOptions(): BrowserWindowConstructorOptions {
  return {
    show: false,
    width: 794,
    height: 1123,
    webPreferences: {
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      webSecurity: true,
      backgroundThrottling: false,
      spellcheck: false,
    },
  }
}

const inches = (mm: number) => mm / 25.4

export interface PrintOptions {
  BrowserWindow: WindowCtor
  page: AppPage
  /** how long the page may take to draw (ms) */
  timeoutMs?: number
  pollMs?: number
}

/** Renders `run` in a hidden window and returns the PDF bytes; the window is always destroyed. */
export async function printReportPdf(run: RunResult, options: PrintOptions): Promise<Buffer> {
  const win = new options.BrowserWindow(reportWindowOptions())
  const timeout = options.timeoutMs ?? 30_000
  try {
    const where = reportPageLocation(options.page)
    if ('file' in where) await win.loadFile(where.file)
    else await win.loadURL(where.url)
    const contents = win.webContents
    // the page waits for window.__TRAINPOOL_RENDER__(run) when nothing was injected before load
    await contents.executeJavaScript(
      `(() => { const run = ${JSON.stringify(run)}; window.__TRAINPOOL_REPORT__ = run; if (typeof window.__TRAINPOOL_RENDER__ === 'function') window.__TRAINPOOL_RENDER__(run); return true })()`,
    )
    const deadline = Date.now() + timeout
    for (;;) {
      const state = (await contents.executeJavaScript(
        `window.__REPORT_READY__ === true ? 'ready' : (typeof window.__REPORT_ERROR__ === 'string' ? 'error: ' + window.__REPORT_ERROR__ : 'waiting')`,
      )) as string
      if (state === 'ready') break
      if (state.startsWith('error: ')) throw new TrainpoolError('internal', `the report page could not draw run ${run.runId}: ${state.slice(7)}`)
      if (Date.now() > deadline) throw new TrainpoolError('internal', `the report page did not finish drawing within ${timeout} ms`)
      await new Promise((r) => setTimeout(r, options.pollMs ?? 50))
    }
    return await contents.printToPDF({
      pageSize: 'A4',
      printBackground: true,
      displayHeaderFooter: true,
      headerTemplate: '<span></span>',
      footerTemplate: footerTemplate(run),
      margins: {
        top: inches(PDF_MARGINS_MM.top),
        bottom: inches(PDF_MARGINS_MM.bottom),
        left: inches(PDF_MARGINS_MM.left),
        right: inches(PDF_MARGINS_MM.right),
      },
      generateDocumentOutline: true,
      generateTaggedPDF: true,
    })
  } finally {
    if (!win.isDestroyed()) win.destroy()
  }
}

export interface DesktopSavingOptions {
  /** Electron's dialog module (looked up when used) */
  dialog: () => Pick<Dialog, 'showSaveDialog'>
  getWindow: () => BrowserWindowType | null
  print: (run: RunResult) => Promise<Buffer>
  writeFile?: (path: string, data: string | Buffer) => Promise<void>
  /** the folder the dialog opens in */
  defaultDir?: () => string
}

const FILTERS: Record<ExportFormat | 'pdf' | 'onnx' | 'model-json', SaveDialogOptions['filters']> = {
  onnx: [{ name: 'ONNX model', extensions: ['onnx'] }],
  'model-json': [{ name: 'XGBoost model (JSON)', extensions: ['json'] }],
  json: [{ name: 'Trainpool run (JSON)', extensions: ['json'] }],
  csv: [{ name: 'CSV (one row per measurement)', extensions: ['csv'] }],
  md: [{ name: 'Markdown table', extensions: ['md'] }],
  leaderboard: [{ name: 'Leaderboard (CSV, one row per configuration)', extensions: ['csv'] }],
  pdf: [{ name: 'PDF report', extensions: ['pdf'] }],
}

/**
 * The desktop shell's service: exportRun, reportPdf and bestModel ask where to save (save dialog) and write the
 * file there, answering with savedPath (null when the user cancelled); everything else is the service.
 */
export function withDesktopSaving(service: BenchServiceApi, options: DesktopSavingOptions): BenchServiceApi {
  const write = options.writeFile ?? ((p: string, d: string | Buffer) => fs.writeFile(p, d))
  const ask = async (fileName: string, kind: keyof typeof FILTERS, title: string): Promise<string | null> => {
    const dialogOptions: SaveDialogOptions = {
      title,
      defaultPath: options.defaultDir ? join(options.defaultDir(), fileName) : fileName,
      filters: FILTERS[kind],
      properties: ['createDirectory', 'showOverwriteConfirmation'],
    }
    const win = options.getWindow()
    const res = win ? await options.dialog().showSaveDialog(win, dialogOptions) : await options.dialog().showSaveDialog(dialogOptions)
    return res.canceled || !res.filePath ? null : res.filePath
  }
  const overrides: Partial<BenchServiceApi> = {
    async exportRun({ runId, format }: ParsedRequest<'exportRun'>): Promise<ExportedFile> {
      const file = await service.exportRun({ runId, format })
      const path = await ask(file.fileName, format, `Export run as ${format.toUpperCase()}`)
      if (path) await write(path, file.content)
      return { ...file, savedPath: path }
    },
    async bestModel({ runId }: ParsedRequest<'bestModel'>): Promise<SavedModel> {
      const file = await service.bestModel({ runId })
      const path = await ask(file.fileName, file.fileName.endsWith('.onnx') ? 'onnx' : 'model-json', 'Save the best model')
      if (path) await write(path, Buffer.from(file.base64 ?? '', 'base64'))
      return { fileName: file.fileName, mimeType: file.mimeType, sizeBytes: file.sizeBytes, savedPath: path }
    },
    async reportPdf({ runId }: ParsedRequest<'reportPdf'>): Promise<PdfReport> {
      const run = await service.getRun({ runId })
      const fileName = exportFileName(run, 'pdf')
      const path = await ask(fileName, 'pdf', 'Save PDF report')
      if (!path) return { fileName, sizeBytes: 0, savedPath: null }
      const pdf = await options.print(run)
      await write(path, pdf)
      return { fileName, sizeBytes: pdf.length, savedPath: path }
    },
  }
  return new Proxy(service, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && prop in overrides) return overrides[prop as keyof BenchServiceApi]
      const value = Reflect.get(target, prop, receiver)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}
