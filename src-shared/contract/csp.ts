// The one Content-Security-Policy of Trainpool's pages (Electron header and browser-mode server):
// offline by design, nothing from any remote origin; only the WebSocket a shell needs is added.
export function offlineContentSecurityPolicy(extraConnectSources: string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    ["connect-src 'self'", ...extraConnectSources].join(' '),
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
}
