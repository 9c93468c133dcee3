import { describe, expect, it } from 'vitest'
import { titleLines } from './chartTitle'

// 7 px a character: enough to check the breaking without a canvas
const measure = (s: string) => s.length * 7

describe('titleLines: a chart title that stays readable', () => {
  it('keeps a title that fits on one line', () => {
    expect(titleLines('Speedup vs sequential', 400, measure)).toEqual(['Speedup vs sequential'])
  })

  it('breaks a long title after its separators and cuts a device name too wide with an ellipsis', () => {
    const title = 'Total time vs data size — 16 MLP models · wasm on NVIDIA GeForce RTX 4090 Laptop GPU with Max-Q Design (Vulkan 1.3.277, driver 550.54.14)'
    const lines = titleLines(title, 280, measure)
    expect(lines).toEqual(['Total time vs data size —', '16 MLP models ·', 'wasm on NVIDIA GeForce RTX 4090 Laptop…'])
    for (const line of lines) expect(measure(line)).toBeLessThanOrEqual(280)
  })

  it('joins parts on one line while they fit, and takes at most three lines', () => {
    expect(titleLines('Worker sweep — 4 models · cpu on a CPU', 200, measure)).toEqual(['Worker sweep — 4 models ·', 'cpu on a CPU'])
    const many = titleLines('aaaaaaaaaa — bbbbbbbbbb · cccccccccc · dddddddddd · eeeeeeeeee', 84, measure)
    expect(many).toHaveLength(3)
    expect(many[2]).toMatch(/…$/)
  })
})
