import { describe, expect, it } from 'vitest'
import { parseTarget } from './advice'

describe("parseTarget: the Advice card's boxes read numbers by the shared rule", () => {
  it('takes whole numbers, grouped by spaces, commas or _', () => {
    expect(parseTarget({ models: '500', size: '50 000' })).toEqual({ target: { models: 500, size: 50000 } })
    expect(parseTarget({ models: '1,000', size: '50_000' })).toEqual({ target: { models: 1000, size: 50000 } })
  })

  it.each([
    ['0x10', '2000'],
    ['1e2', '2000'],
    ['16.0', '2000'],
  ])('refuses models %j (hex, an exponent, a fraction), naming the field', (models, size) => {
    expect(parseTarget({ models, size })).toEqual({ errors: { models: ['models must be a whole number from 1 to 1000000'], size: [] } })
  })
})
