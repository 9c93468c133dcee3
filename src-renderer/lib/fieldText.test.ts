import { describe, expect, it } from 'vitest'
import { mlpFamily } from '@shared/families'
import { fieldWords, sayIssue } from './fieldText'

const say = (field: string, message: string, texts: Record<string, string>) =>
  sayIssue({ field, message }, fieldWords(field, texts, mlpFamily.fields), mlpFamily.fields)

describe("error messages in the panel's words", () => {
  it('names the field by its label and quotes the text typed, not the parsed value ("got null")', () => {
    expect(say('model.lr', 'lr must be a number (got null)', { 'model.lr': '1e' })).toBe(
      'Learning rate: "1e" is not a number; enter a number from 0.000001 to 1',
    )
    expect(say('sizes.1', 'sizes must be a number (got null)', { 'sizes.1': '5k' })).toBe(
      'Data size 2: "5k" is not a number; enter a whole number of rows from 2 to 2,000,000',
    )
  })

  it('an empty box says it is empty and what it takes', () => {
    expect(say('repeats', 'repeats must be a number (got null)', { repeats: '' })).toBe('Repeats is empty; enter a whole number from 1 to 100')
  })

  it('a list names the one item that is wrong', () => {
    expect(say('model.hidden.1', 'hidden must be a number (got null)', { 'model.hidden': '64, abc' })).toMatch(/^Hidden layers: "abc" is not a number/)
    expect(say('models.0', 'models must be an integer from 1 to 1000 (got 0)', { models: '0, 8' })).toBe(
      'Models (N) must be an integer from 1 to 1000 (you typed "0")',
    )
  })

  it('a range error keeps its range, with the label instead of the internal name', () => {
    expect(say('testSplit', 'testSplit must be from 0.05 to 0.5 (got 0.9)', { testSplit: '0.9' })).toBe('Test split must be from 0.05 to 0.5 (you typed "0.9")')
    expect(say('model.batchSize', 'batchSize must be an integer from 1 to 65536 (got 0)', { 'model.batchSize': '0' })).toMatch(/^Batch size must be an integer/)
  })

  it('a message that already quotes the value is not repeated; internal names inside are said too', () => {
    const m = say('sizes', 'sizes 5 leaves 4 training and 1 test rows at testSplit 0.2; it needs at least one of each', {})
    expect(m).toBe('Data sizes 5 leaves 4 training and 1 test rows at test split 0.2; it needs at least one of each')
    expect(say('workers', 'workers 9 is more than models 4: each worker needs at least one model (workers must be from 1 to 4)', { workers: '9' })).toBe(
      'Workers (W) 9 is more than models 4: each worker needs at least one model (workers must be from 1 to 4)',
    )
  })

  it("a data check refusal is said in the service's words, capitalised, whoever found it", () => {
    expect(say('data.target', 'data: target column "cost" is not in houses.csv; its numeric columns are "area", "price"', {})).toBe(
      'Target column "cost" is not in houses.csv; its numeric columns are "area", "price"',
    )
    expect(say('data.features', 'no feature columns are left in houses.csv', {})).toBe('No feature columns are left in houses.csv')
  })
})
