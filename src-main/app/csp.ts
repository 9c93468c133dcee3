// Content-Security-Policy for the app's own pages, sent as a response header (the renderer's
// <meta> tag is a second line of defence). Offline by design: no remote origin anywhere.
import type { Session } from 'electron'
import { offlineContentSecurityPolicy } from '@shared/contract/csp'
import type { AppPage } from './app-page'

export function contentSecurityPolicy(page: AppPage): string {
  // The Vite dev server needs its HMR WebSocket; production needs nothing outside 'self'.
  return offlineContentSecurityPolicy(page.devOrigin ? [page.devOrigin.replace(/^http/, 'ws')] : [])
}

type HeadersSession = Pick<Session, 'webRequest'>

/** Adds the CSP header to every response for one of the app's pages; leaves other responses alone. */
export function installCsp(session: HeadersSession, page: AppPage): void {
  const policy = contentSecurityPolicy(page)
  session.webRequest.onHeadersReceived((details, callback) => {
    if (!page.isAppUrl(details.url)) {
      callback({})
      return
    }
    const headers: Record<string, string | string[]> = {}
    for (const [k, v] of Object.entries(details.responseHeaders ?? {})) {
      if (k.toLowerCase() !== 'content-security-policy') headers[k] = v
    }
    headers['Content-Security-Policy'] = [policy]
    callback({ responseHeaders: headers })
  })
}
