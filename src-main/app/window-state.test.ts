import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULT_WINDOW_STATE, MIN_SIZE, loadWindowState, saveWindowState } from './window-state'

const screen = [{ x: 0, y: 0, width: 1920, height: 1080 }]
const file = () => join(mkdtempSync(join(tmpdir(), 'tp-ws-')), 'window-state.json')

describe('window state', () => {
  it('falls back to defaults when missing or damaged', () => {
    expect(loadWindowState(join(tmpdir(), 'does-not-exist.json'), screen)).toEqual(DEFAULT_WINDOW_STATE)
    const f = file()
    writeFileSync(f, '{ not json')
    expect(loadWindowState(f, screen)).toEqual(DEFAULT_WINDOW_STATE)
    writeFileSync(f, JSON.stringify({ width: 'big', height: -3, x: 1.5, y: null }))
    expect(loadWindowState(f, screen)).toEqual(DEFAULT_WINDOW_STATE)
  })

  it('round-trips and writes atomically (no temp file left)', () => {
    const f = file()
    saveWindowState(f, { x: 100, y: 50, width: 1000, height: 700, maximized: true })
    expect(loadWindowState(f, screen)).toEqual({ x: 100, y: 50, width: 1000, height: 700, maximized: true })
    expect(readdirSync(join(f, '..'))).toEqual(['window-state.json'])
  })

  it('drops a position that is no longer on any display, and clamps tiny sizes', () => {
    const f = file()
    saveWindowState(f, { x: 5000, y: 5000, width: 100, height: 100, maximized: false })
    const s = loadWindowState(f, screen)
    expect(s.x).toBeUndefined()
    expect(s.y).toBeUndefined()
    expect(s.width).toBe(MIN_SIZE.width)
    expect(s.height).toBe(MIN_SIZE.height)
    // a second monitor to the right makes it valid again
    expect(loadWindowState(f, [...screen, { x: 4000, y: 4000, width: 2560, height: 1440 }]).x).toBe(5000)
  })
})
