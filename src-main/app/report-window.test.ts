import { describe, expect, it, vi } from 'vitest'
import { fakeRun } from '../testing/run-fixtures'
import { resolveAppPage } from './app-page'
import { printReportPdf, reportPageLocation, withDesktopSaving } from './report-window'
import { FakeService } from '@shared/testing/fake-service'

const page = resolveAppPage({ rendererDir: '/app/out/renderer', allowDevServer: false, platform: 'linux' })

class FakeReportWindow {
  static last: FakeReportWindow
  destroyed = false
  injected: unknown = undefined
  polls = 0
  loadFile = vi.fn(async (_p: string) => {})
  loadURL = vi.fn(async (_u: string) => {})
  printed: Record<string, unknown> | null = null
  webContents = {
    executeJavaScript: vi.fn(async (code: string): Promise<unknown> => {
      if (code.includes('__TRAINPOOL_REPORT__ = run')) {
        this.injected = JSON.parse(/const run = (.*); window\.__TRAINPOOL_REPORT__/s.exec(code)![1])
        return true
      }
      // ready on the third poll, like a page that draws a little later
      return ++this.polls >= 3 ? 'ready' : 'waiting'
    }),
    printToPDF: vi.fn(async (opts: Record<string, unknown>) => {
      this.printed = opts
      return Buffer.from('%PDF-1.7 fake')
    }),
  }
  constructor(public options: Record<string, unknown>) {
    FakeReportWindow.last = this
  }
  isDestroyed() {
    return this.destroyed
  }
  destroy() {
    this.destroyed = true
  }
}

describe('desktop PDF report', () => {
  it('loads report.html next to the app page in a hidden sandboxed window, hands over the run, waits for ready, prints A4', async () => {
    const run = fakeRun()
    const pdf = await printReportPdf(run, { BrowserWindow: FakeReportWindow as never, page, pollMs: 1 })
    const w = FakeReportWindow.last
    expect(pdf.toString()).toContain('%PDF')
    expect(w.options).toMatchObject({ show: false, webPreferences: { sandbox: true, contextIsolation: true, nodeIntegration: false } })
    expect(w.loadFile).toHaveBeenCalledWith('/app/out/renderer/report.html')
    expect(w.injected).toEqual(run)
    expect(w.polls).toBe(3)
    expect(w.printed).toMatchObject({ pageSize: 'A4', printBackground: true, displayHeaderFooter: true })
    expect(w.destroyed).toBe(true)
  })

  it('reports a page that fails to draw, and destroys the window anyway', async () => {
    class Failing extends FakeReportWindow {
      constructor(o: Record<string, unknown>) {
        super(o)
        this.webContents.executeJavaScript = vi.fn(async (code: string): Promise<unknown> => (code.includes('__REPORT_READY__') ? 'error: bad data' : true))
      }
    }
    await expect(printReportPdf(fakeRun(), { BrowserWindow: Failing as never, page, pollMs: 1 })).rejects.toThrow(/could not draw run .*bad data/)
    expect(FakeReportWindow.last.destroyed).toBe(true)
  })

  it('uses the dev server in development', () => {
    const dev = resolveAppPage({ rendererDir: '/x', devServerUrl: 'http://localhost:5173/', allowDevServer: true })
    expect(reportPageLocation(dev)).toEqual({ url: 'http://localhost:5173/report.html' })
  })

  it('saves exports and PDFs where the save dialog says; a cancelled dialog writes nothing', async () => {
    const service = new FakeService().addRun(fakeRun({}, 'run-1'))
    const writes: [string, string | Buffer][] = []
    let answer: { canceled: boolean; filePath?: string } = { canceled: false, filePath: '/home/u/out.csv' }
    const showSaveDialog = vi.fn(async () => answer)
    const print = vi.fn(async () => Buffer.from('%PDF'))
    const desktop = withDesktopSaving(service, {
      dialog: () => ({ showSaveDialog }) as never,
      getWindow: () => null,
      print,
      writeFile: async (p, d) => void writes.push([p, d]),
    })
    const file = await desktop.exportRun({ runId: 'run-1', format: 'csv' })
    expect(file.savedPath).toBe('/home/u/out.csv')
    expect(writes).toEqual([['/home/u/out.csv', 'fake csv of run-1']])
    expect(showSaveDialog).toHaveBeenCalledWith(
      expect.objectContaining({ defaultPath: 'trainpool-run-1.csv', filters: [expect.objectContaining({ extensions: ['csv'] })] }),
    )

    answer = { canceled: false, filePath: '/home/u/report.pdf' }
    const report = await desktop.reportPdf({ runId: 'run-1' })
    expect(report).toEqual({ fileName: 'trainpool-run-1.pdf', sizeBytes: 4, savedPath: '/home/u/report.pdf' })
    expect(print).toHaveBeenCalledTimes(1)

    answer = { canceled: true }
    expect((await desktop.reportPdf({ runId: 'run-1' })).savedPath).toBeNull()
    expect(print).toHaveBeenCalledTimes(1) // nothing rendered for a cancelled dialog
    expect(writes).toHaveLength(2)
    // the best model: its bytes written where the dialog says, with the model's own filter
    service.addRun({ ...fakeRun({}, 'run-2'), keptModels: { size: 2000, strategy: 'sequential', workers: 1, count: 4, format: 'mlp' } })
    answer = { canceled: false, filePath: '/home/u/best.onnx' }
    expect(await desktop.bestModel({ runId: 'run-2' })).toMatchObject({ fileName: 'trainpool-run-2-model-0.onnx', savedPath: '/home/u/best.onnx' })
    expect(writes[2]).toEqual(['/home/u/best.onnx', Buffer.from('{}')])
    expect(showSaveDialog).toHaveBeenLastCalledWith(expect.objectContaining({ filters: [expect.objectContaining({ extensions: ['onnx'] })] }))
    // everything else goes straight to the service
    await desktop.listRuns()
    expect(service.callsTo('listRuns')).toHaveLength(1)
    expect(service.callsTo('reportPdf')).toEqual([])
  })
})
