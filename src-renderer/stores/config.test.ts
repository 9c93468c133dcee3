// The config store's draft across the model set's edges: Reset and a family switch leave no field
// of another configuration behind (no count from a grid no box shows), a wrong seeds or folds is
// said once, and every box reads numbers by the shared rule (decimal, an integer written as one).
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { DEFAULT_CONFIG } from '@shared/contract/config'
import { setBridge } from '../bridge'
import { useConfigStore } from './config'
import { parseList } from './draft/text-boxes'

beforeEach(() => {
  localStorage.clear()
  setActivePinia(createPinia())
  setBridge(fakeBridge(new FakeService()))
})
afterEach(() => setBridge(null))

/** A trees grid (eta × max depth × 2 seeds) as a new user types it. */
function treesGrid() {
  const cfg = useConfigStore()
  cfg.setFamily('gbdt')
  cfg.setModelField('eta', '0.1, 0.3')
  cfg.setModelField('maxDepth', '3, 5')
  cfg.setSetNumber('seeds', '2')
  expect(cfg.draft.set).toEqual({ grid: { eta: [0.1, 0.3], maxDepth: [3, 5] }, seeds: 2, folds: null })
  return cfg
}

describe('config store: Reset and a family switch', () => {
  it('Reset after a trees grid is the default MLP run: no set, N its own, nothing to fix', () => {
    const cfg = treesGrid()
    cfg.reset()
    expect(cfg.draft.set).toBeUndefined()
    expect(cfg.draft.model.kind).toBe('mlp')
    expect(cfg.draft.models).toEqual(DEFAULT_CONFIG.models)
    expect(cfg.listText.models).toBe(String(DEFAULT_CONFIG.models[0]))
    expect(cfg.setText).toEqual({ seeds: '1', folds: '' })
    expect(cfg.issues).toEqual([])
    expect(cfg.valid).toBe(true)
    // a new grid counts only what its boxes show: 2 learning rates × 3 folds
    cfg.setModelField('lr', '0.01, 0.03')
    cfg.setSetNumber('folds', '3')
    expect(cfg.draft.set).toEqual({ grid: { lr: [0.01, 0.03] }, seeds: 1, folds: 3 })
    expect(cfg.draft.models).toEqual([6])
    cfg.setList('workers', '2')
    expect(cfg.issues).toEqual([])
  })

  it('Reset clears every optional field the default leaves out (GPUs too)', () => {
    const cfg = useConfigStore()
    cfg.draft.gpus = 'all'
    cfg.reset()
    expect(cfg.draft).toEqual(DEFAULT_CONFIG)
  })

  it('a family switch drops the grid fields the new family does not have; seeds and folds stay', () => {
    const cfg = treesGrid()
    cfg.setFamily('mlp')
    expect(cfg.draft.set).toEqual({ grid: {}, seeds: 2, folds: null })
    expect(cfg.draft.models).toEqual([2])
    expect(cfg.issues.filter((i) => i.field.startsWith('set'))).toEqual([])
  })
})

describe('config store: what a family switch and a grid taken away leave', () => {
  it('a backend the new family lacks becomes auto, with no error; one it has stays', () => {
    const cfg = useConfigStore()
    cfg.draft.backend = 'wasm'
    cfg.setFamily('gbdt')
    expect(cfg.draft.backend).toBe('auto')
    expect(cfg.issues).toEqual([])
    cfg.draft.backend = 'cpu'
    cfg.setFamily('mlp')
    expect(cfg.draft.backend).toBe('cpu')
    // compared side by side: what the trees have of them, one alone its name alone
    cfg.draft.backend = ['wasm', 'cpu']
    cfg.setFamily('gbdt')
    expect(cfg.draft.backend).toBe('cpu')
    expect(cfg.issues).toEqual([])
  })

  it("a grid tried and taken away puts the models box back at the value it held, not the grid's N", () => {
    const cfg = useConfigStore()
    cfg.setList('models', '7')
    cfg.setModelField('lr', '0.01, 0.03, 0.1')
    expect(cfg.draft.models).toEqual([3])
    cfg.setModelField('lr', '0.01')
    expect(cfg.draft.set).toBeUndefined()
    expect(cfg.draft.models).toEqual([7])
    expect(cfg.listText.models).toBe('7')
    // seeds on and off again: the same
    cfg.setSetNumber('seeds', '4')
    expect(cfg.draft.models).toEqual([4])
    cfg.setSetNumber('seeds', '1')
    expect(cfg.draft.models).toEqual([7])
    expect(cfg.issues).toEqual([])
  })
})

describe('config store: numbers typed into boxes (the shared rule)', () => {
  it.each([
    ['maxDepth', '0x3', 'Max depth: "0x3" is not a decimal number; enter an integer from 1 to 16'],
    ['maxDepth', '1e1', 'Max depth: "1e1" is not written as an integer; enter an integer from 1 to 16'],
    ['lambda', '0x10', 'L2 (lambda): "0x10" is not a decimal number; enter a number from 0 to 1000000'],
  ])('a trees field %s of %j is refused: %s', (key, text, message) => {
    const cfg = useConfigStore()
    cfg.setFamily('gbdt')
    cfg.setModelField(key, text)
    expect(cfg.messagesFor(`model.${key}`)).toEqual([message])
  })

  it('the seeds, folds, repeats, size, list and test-split boxes read decimals only', () => {
    const cfg = useConfigStore()
    cfg.setSetNumber('seeds', '2.0')
    expect(cfg.messagesFor('set.seeds')).toEqual(['Seeds per configuration: "2.0" is not written as an integer; enter a whole number from 1 to 100'])
    cfg.setSetNumber('seeds', '1')
    cfg.setSetNumber('folds', '0x3')
    expect(cfg.messagesFor('set.folds')).toEqual([
      'Cross-validation folds: "0x3" is not a decimal number; enter a whole number from 2 to 10, or empty for none',
    ])
    cfg.setSetNumber('folds', '')
    cfg.setNumber('repeats', '1e1')
    expect(cfg.messagesFor('repeats')).toEqual(['Repeats: "1e1" is not written as an integer; enter a whole number from 1 to 100'])
    cfg.setNumber('repeats', '3')
    cfg.setSize(0, '0x2710')
    expect(cfg.messagesFor('sizes')).toEqual(['Data size 1: "0x2710" is not a decimal number; enter a whole number of rows from 2 to 2,000,000'])
    cfg.setSize(0, '10_000')
    expect(cfg.draft.sizes[0]).toBe(10000)
    cfg.setNumber('testSplit', '0x0')
    expect(cfg.messagesFor('testSplit')).toEqual(['Test split: "0x0" is not a decimal number; enter a number from 0.05 to 0.5'])
    expect(parseList('5, 0x10, 2.0')).toEqual([5, NaN, NaN])
    expect(parseList(' 1 2;3 ')).toEqual([1, 2, 3])
  })

  it('an empty item of a list is refused by its place, as the CLI refuses it', () => {
    const cfg = useConfigStore()
    cfg.setFamily('gbdt')
    cfg.setModelField('eta', '0.1,,0.3')
    expect(cfg.draft.set?.grid.eta).toEqual([0.1, NaN, 0.3])
    expect(cfg.messagesFor('set.grid.eta')).toEqual(['Learning rate (eta): value 2 is empty; enter a number above 0 and at most 1'])
    cfg.setList('workers', '1,,2')
    expect(cfg.messagesFor('workers')).toEqual(['Workers (W): value 2 is empty; enter whole numbers from 1 to 64, e.g. 2 or 1, 2, 5'])
  })

  it('a wrong seeds or folds is said once, on its box, not again as a model or worker count', () => {
    const cfg = useConfigStore()
    cfg.setList('workers', '2')
    cfg.setSetNumber('folds', '1')
    expect(cfg.issues.map((i) => i.field)).toEqual(['set.folds'])
    cfg.setSetNumber('folds', '')
    cfg.setSetNumber('seeds', '0')
    expect(cfg.issues.map((i) => i.field)).toEqual(['set.seeds'])
  })
})
