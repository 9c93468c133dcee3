// How the report page gets its run and says it is done, one protocol for every printer: headless
// Chromium sets window.__TRAINPOOL_REPORT__ before load, Electron calls window.__TRAINPOOL_RENDER__
// after load, by hand report.html#run=<base64url JSON>. When drawn it sets body.dataset.ready and
// window.__REPORT_READY__ (on failure dataset.error and __REPORT_ERROR__); ../README.md, "report/".
import type { RunResult } from '@shared/contract/result'

declare global {
  interface Window {
    __TRAINPOOL_REPORT__?: unknown
    __TRAINPOOL_RENDER__?: (run: unknown) => void
    __REPORT_READY__?: boolean
    __REPORT_ERROR__?: string
  }
}

/** The minimal shape check the page needs before rendering (the stored file was validated by zod already). */
export function asRun(value: unknown): RunResult {
  const r = value as Partial<RunResult> | null
  if (!r || typeof r !== 'object' || typeof r.runId !== 'string' || !Array.isArray(r.measurements) || !Array.isArray(r.summary) || !r.config) {
    throw new Error('the report data is not a Trainpool run (runId, config, measurements and summary are required)')
  }
  return r as RunResult
}

export function runFromHash(hash: string): unknown {
  const m = /^#run=(.+)$/.exec(hash)
  if (!m) return undefined
  const b64 = m[1].replace(/-/g, '+').replace(/_/g, '/')
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))
  return JSON.parse(new TextDecoder().decode(bytes))
}

/** Resolves with the run as soon as one of the three sources provides it. */
export function waitForRun(win: Window = window): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const take = (value: unknown) => {
      try {
        resolve(asRun(value))
      } catch (err) {
        reject(err)
      }
    }
    win.__TRAINPOOL_RENDER__ = take
    if (win.__TRAINPOOL_REPORT__ !== undefined) return take(win.__TRAINPOOL_REPORT__)
    try {
      const fromHash = runFromHash(win.location.hash)
      if (fromHash !== undefined) take(fromHash)
    } catch (err) {
      reject(new Error(`could not read the run from the URL: ${(err as Error).message}`))
    }
  })
}

export async function signalReady(doc: Document = document, win: Window = window): Promise<void> {
  try {
    await doc.fonts?.ready
  } catch {
    /* fonts are bundled; a failure here must not block printing */
  }
  doc.body.dataset.ready = 'true'
  win.__REPORT_READY__ = true
}

export function signalError(message: string, doc: Document = document, win: Window = window): void {
  doc.body.dataset.error = message
  win.__REPORT_ERROR__ = message
}
