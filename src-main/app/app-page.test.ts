import { describe, expect, it } from 'vitest'
import { resolveAppPage } from './app-page'

describe('app page', () => {
  it('production: the renderer folder on disk is the only app location', () => {
    const page = resolveAppPage({ rendererDir: '/app/out/renderer', allowDevServer: false, devServerUrl: 'http://localhost:5173' })
    expect(page.kind).toBe('file')
    expect(page.url).toBe('file:///app/out/renderer/index.html')
    expect(page.isAppUrl('file:///app/out/renderer/index.html#/runs/abc')).toBe(true)
    expect(page.isAppUrl('file:///app/out/renderer/report.html?run=1')).toBe(true)
    expect(page.isAppUrl('file:///app/out/renderer/../../etc/passwd')).toBe(false)
    expect(page.isAppUrl('file:///app/out/renderer2/index.html')).toBe(false)
    expect(page.isAppUrl('file://evil.host/app/out/renderer/index.html')).toBe(false)
    expect(page.isAppUrl('http://localhost:5173/')).toBe(false)
    expect(page.isAppUrl('not a url')).toBe(false)
  })

  it('dev: the dev server origin, only when allowed', () => {
    const page = resolveAppPage({ rendererDir: '/x', allowDevServer: true, devServerUrl: 'http://localhost:5173' })
    expect(page.kind).toBe('dev')
    expect(page.isAppUrl('http://localhost:5173/src/main.ts')).toBe(true)
    expect(page.isAppUrl('http://localhost:5174/')).toBe(false)
    expect(page.isAppUrl('file:///x/index.html')).toBe(false)
    expect(resolveAppPage({ rendererDir: '/x', allowDevServer: true, devServerUrl: 'javascript:alert(1)' }).kind).toBe('file')
  })
})
