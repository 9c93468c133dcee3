import { describe, expect, it } from 'vitest'
import { itemProblem, numberOf, readNumber } from './fields'

describe('readNumber: the one rule for a typed number (every flag and config panel box)', () => {
  it.each([
    ['3', 'integer', 3],
    ['-3', 'integer', -3],
    ['+3', 'integer', 3],
    ['10_000', 'integer', 10000],
    [' 7 ', 'integer', 7],
    ['9007199254740991', 'integer', Number.MAX_SAFE_INTEGER],
    ['0.1', 'real', 0.1],
    ['.5', 'real', 0.5],
    ['5.', 'real', 5],
    ['1e-3', 'real', 0.001],
    ['2.5E2', 'real', 250],
    ['3', 'real', 3],
  ] as const)('reads %j as %s: %d', (text, kind, value) => {
    expect(readNumber(text, kind)).toEqual({ value })
  })

  it.each([
    ['0x10', 'real', 'is not a decimal number'],
    ['0x3', 'integer', 'is not a decimal number'],
    ['0b101', 'integer', 'is not a decimal number'],
    ['0o7', 'integer', 'is not a decimal number'],
    ['1e1', 'integer', 'is not written as an integer'],
    ['2.0', 'integer', 'is not written as an integer'],
    ['2.5', 'integer', 'is not an integer'],
    ['Infinity', 'real', 'is not a number'],
    ['NaN', 'real', 'is not a number'],
    ['1,5', 'real', 'is not a number'],
    ['1 000', 'integer', 'is not a number'],
    ['_1', 'integer', 'is not a number'],
    ['1e400', 'real', 'is too large'],
    ['9007199254740993', 'integer', 'is too large to be exact (at most 9007199254740991)'],
    ['-9_007_199_254_740_992', 'integer', 'is too small to be exact (at least -9007199254740991)'],
    ['', 'real', 'is empty'],
    ['  ', 'integer', 'is empty'],
  ] as const)('refuses %j as %s: %s', (text, kind, problem) => {
    expect(readNumber(text, kind)).toEqual({ problem })
    expect(numberOf(text, kind)).toBeNaN()
  })

  it('names a list item by its place when empty, by its text otherwise', () => {
    expect(itemProblem('', 1, 'real')).toBe('value 2 is empty')
    expect(itemProblem(' 0x1 ', 0, 'real')).toBe('"0x1" is not a decimal number')
    expect(itemProblem('4', 0, 'integer')).toBeNull()
  })
})
