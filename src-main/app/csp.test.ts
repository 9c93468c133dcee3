import { describe, expect, it } from 'vitest'
import { resolveAppPage } from './app-page'
import { contentSecurityPolicy, installCsp } from './csp'

type Listener = Parameters<Parameters<typeof installCsp>[0]['webRequest']['onHeadersReceived']>[0]

function fakeSession() {
  let listener: Listener | null = null
  const session = { webRequest: { onHeadersReceived: (l: Listener) => (listener = l) } }
  const run = (url: string, responseHeaders?: Record<string, string[]>) =>
    new Promise<{ responseHeaders?: Record<string, string | string[]> }>((resolve) =>
      (listener as unknown as (d: unknown, cb: (r: unknown) => void) => void)({ url, responseHeaders }, resolve as never),
    )
  return { session: session as never, run }
}

const filePage = resolveAppPage({ rendererDir: '/app/out/renderer', allowDevServer: false })

describe('Content-Security-Policy', () => {
  it('allows only the app itself: no remote origins, no eval, no plugins', () => {
    const csp = contentSecurityPolicy(filePage)
    expect(csp).toContain("default-src 'self'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("object-src 'none'")
    expect(csp).not.toMatch(/unsafe-eval|https?:|\*/)
  })

  it('lets the dev server HMR socket through in dev mode only', () => {
    const dev = resolveAppPage({ rendererDir: '/x', devServerUrl: 'http://localhost:5173', allowDevServer: true })
    expect(contentSecurityPolicy(dev)).toContain("connect-src 'self' ws://localhost:5173")
    const packaged = resolveAppPage({ rendererDir: '/x', devServerUrl: 'http://localhost:5173', allowDevServer: false })
    expect(packaged.kind).toBe('file')
  })

  it('is set as a response header on app pages, replacing any other CSP', async () => {
    const { session, run } = fakeSession()
    installCsp(session, filePage)
    const r = await run('file:///app/out/renderer/index.html', { 'content-security-policy': ['default-src *'], 'X-Other': ['1'] })
    expect(r.responseHeaders).toEqual({ 'X-Other': ['1'], 'Content-Security-Policy': [contentSecurityPolicy(filePage)] })
    const asset = await run('file:///app/out/renderer/assets/index-abc.js')
    expect(asset.responseHeaders?.['Content-Security-Policy']).toBeDefined()
  })

  it('leaves responses that are not the app alone', async () => {
    const { session, run } = fakeSession()
    installCsp(session, filePage)
    expect(await run('https://example.com/', { a: ['b'] })).toEqual({})
  })
})
