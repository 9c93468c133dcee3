// Remembers the main window's size and position in userData/window-state.json. A saved position
// that no longer lies on any display (monitor unplugged) is dropped, so the window is centred.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'

export interface Rect {
  x: number
  y: number
  width: number
  height: number
}

export interface WindowState {
  x?: number
  y?: number
  width: number
  height: number
  maximized: boolean
}

export const DEFAULT_WINDOW_STATE: WindowState = { width: 1280, height: 840, maximized: false }
export const MIN_SIZE = { width: 900, height: 600 }
const MAX_DIM = 20_000
/** how much of the window must overlap a display for its saved position to be kept */
const MIN_VISIBLE = 100

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && Math.abs(v) <= MAX_DIM * 4

function overlap(a: Rect, b: Rect): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x)
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y)
  return w > 0 && h > 0 ? Math.min(w, h) : 0
}

/** Reads the saved state; anything missing, damaged or off-screen falls back to defaults. */
export function loadWindowState(file: string, workAreas: Rect[]): WindowState {
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    return { ...DEFAULT_WINDOW_STATE }
  }
  if (raw === null || typeof raw !== 'object') return { ...DEFAULT_WINDOW_STATE }
  const r = raw as Record<string, unknown>
  const state: WindowState = { ...DEFAULT_WINDOW_STATE, maximized: r.maximized === true }
  if (isInt(r.width) && isInt(r.height) && r.width > 0 && r.height > 0) {
    state.width = Math.min(Math.max(r.width, MIN_SIZE.width), MAX_DIM)
    state.height = Math.min(Math.max(r.height, MIN_SIZE.height), MAX_DIM)
  }
  if (isInt(r.x) && isInt(r.y)) {
    const rect = { x: r.x, y: r.y, width: state.width, height: state.height }
    if (workAreas.some((area) => overlap(rect, area) >= MIN_VISIBLE)) {
      state.x = r.x
      state.y = r.y
    }
  }
  return state
}

/** Writes atomically (temp file + rename) so a crash never leaves a half-written file. */
export function saveWindowState(file: string, state: WindowState): void {
  mkdirSync(dirname(file), { recursive: true })
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(state, null, 2))
  renameSync(tmp, file)
}
