// Delivering exports and PDFs to the user. Electron's main process already saved them through a
// save dialog (savedPath set, or null when cancelled); in the browser the content is downloaded.
import type { ExportedFile, PdfReport, SavedModel } from '@shared/contract/api'

export function downloadBlob(blob: Blob, fileName: string, doc: Document = document): void {
  const url = URL.createObjectURL(blob)
  const a = doc.createElement('a')
  a.href = url
  a.download = fileName
  a.rel = 'noopener'
  a.style.display = 'none'
  doc.body.appendChild(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

/** What happened, in words for the status line. */
export function deliverExport(file: ExportedFile, download: typeof downloadBlob = downloadBlob): string {
  if (file.savedPath !== undefined) return file.savedPath ? `Saved ${file.savedPath}` : 'Export cancelled'
  download(new Blob([file.content], { type: file.mimeType }), file.fileName)
  return `Downloaded ${file.fileName}`
}

export function deliverPdf(report: PdfReport, download: typeof downloadBlob = downloadBlob): string {
  if (report.savedPath !== undefined) return report.savedPath ? `Saved PDF report ${report.savedPath}` : 'Save PDF cancelled'
  if (!report.base64) return 'The PDF report came back empty'
  const bytes = Uint8Array.from(atob(report.base64), (c) => c.charCodeAt(0))
  download(new Blob([bytes], { type: 'application/pdf' }), report.fileName)
  return `Downloaded ${report.fileName}`
}

export function deliverModel(model: SavedModel, download: typeof downloadBlob = downloadBlob): string {
  if (model.savedPath !== undefined) return model.savedPath ? `Saved the best model ${model.savedPath}` : 'Save model cancelled'
  const bytes = Uint8Array.from(atob(model.base64 ?? ''), (c) => c.charCodeAt(0))
  download(new Blob([bytes], { type: model.mimeType }), model.fileName)
  return `Downloaded ${model.fileName}`
}
