// Guards every webContents gets (Electron security checklist §13, §14, webviews) and the session's
// permission policy: the app needs no camera, geolocation, notifications…
import type { Session, WebContents } from 'electron'

const ALLOWED_PERMISSIONS = new Set(['clipboard-sanitized-write'])

export function hardenWebContents(contents: Pick<WebContents, 'on' | 'setWindowOpenHandler'>): void {
  // The app is one page; in-page (hash) navigation does not fire will-navigate.
  contents.on('will-navigate', (event) => event.preventDefault())
  contents.on('will-attach-webview', (event) => event.preventDefault())
  contents.setWindowOpenHandler(() => ({ action: 'deny' }))
}

export function hardenSession(session: Pick<Session, 'setPermissionRequestHandler' | 'setPermissionCheckHandler'>): void {
  session.setPermissionRequestHandler((_contents, permission, callback) => callback(ALLOWED_PERMISSIONS.has(permission)))
  session.setPermissionCheckHandler((_contents, permission) => ALLOWED_PERMISSIONS.has(permission))
}
