// The user's data as a worker builds it: the seeded row sample (the same for every call, nested
// across sizes, rows with a target only), the split, and imputing and standardising with the
// training rows' statistics only. A classifier on a text target: class indices in the task's
// order, stratified training rows, rows without a label never sampled.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BenchConfig, type DataSource, foldRows, type Workload, type WorkloadData, presetConfig, workloadFor } from '@shared/contract'
import { loadDataFile, resolveDataSource, tablePath } from '../../data'
import { datasetFor } from './generated'
import { sampleRows } from '../../data/row-sample'
import { trainingStats } from './user-data'

const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-user-data-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// row r: id = r, x = r (missing every 7th row), y = 2r (missing in rows 3 and 4)
let data: WorkloadData
beforeAll(async () => {
  const lines = ['id,x,y', ...Array.from({ length: 100 }, (_, r) => `${r},${r % 7 === 0 ? '' : r},${r === 3 || r === 4 ? 'NA' : 2 * r}`)]
  writeFileSync(join(dir, 't.csv'), lines.join('\n'))
  const info = await loadDataFile(join(dir, 't.csv'), join(dir, 'store'))
  data = { table: tablePath(join(dir, 'store'), info.sha256), sha256: info.sha256, targetColumn: 2, featureColumns: [0, 1], impute: 'none', standardise: false }
})

function workload(size: number, d: Partial<WorkloadData> = {}, seed = 42): Workload {
  return workloadFor({ ...presetConfig('smoke'), seed, testSplit: 0.2 }, size, { ...data, ...d })
}

describe('the row sample', () => {
  it('is seeded, nested across sizes, and only takes rows with a target', () => {
    const y = new Float32Array(100).map((_, r) => (r === 3 || r === 4 ? NaN : 2 * r))
    const big = sampleRows(y, 98, 42)
    expect(new Set(big).size).toBe(98)
    expect([...big]).not.toContain(3)
    expect([...big]).not.toContain(4)
    expect(sampleRows(y, 98, 42)).toEqual(big)
    expect([...sampleRows(y, 30, 42)]).toEqual([...big.subarray(0, 30)])
    expect([...sampleRows(y, 30, 43)]).not.toEqual([...big.subarray(0, 30)])
    expect(() => sampleRows(y, 99, 42)).toThrow(/the data set has 98 rows with a target value/)
  })

  it('raw for trees: the sampled rows, split training then test, missing values kept as NaN', () => {
    const d = datasetFor(workload(50))
    expect(d).toMatchObject({ train: 40, test: 10 })
    expect(d.spec.features).toBe(2)
    const ids = [...d.xTrain.filter((_, i) => i % 2 === 0), ...d.xTest.filter((_, i) => i % 2 === 0)]
    const ys = [...d.yTrain, ...d.yTest]
    ids.forEach((id, k) => {
      expect(ys[k]).toBe(2 * id)
      const x = (k < 40 ? d.xTrain : d.xTest)[(k % 40) * 2 + 1]
      if (id % 7 === 0) expect(x).toBeNaN()
      else expect(x).toBe(id)
    })
    // the same rows for every worker and strategy
    expect(datasetFor(workload(50)).xTrain).toEqual(d.xTrain)
  })

  it("standardised and imputed with the training rows' statistics only", () => {
    const raw = datasetFor(workload(60))
    const { mean, std } = trainingStats(raw.xTrain, raw.train, 2)
    const d = datasetFor(workload(60, { impute: 'mean', standardise: true }))
    for (let i = 0; i < raw.xTrain.length; i++) {
      const f = i % 2
      const expected = Number.isNaN(raw.xTrain[i]) ? 0 : (raw.xTrain[i] - mean[f]) / std[f]
      expect(d.xTrain[i]).toBeCloseTo(expected, 5)
    }
    for (let i = 0; i < raw.xTest.length; i++) {
      const f = i % 2
      const expected = Number.isNaN(raw.xTest[i]) ? 0 : (raw.xTest[i] - mean[f]) / std[f]
      expect(d.xTest[i]).toBeCloseTo(expected, 5)
    }
    // training features end up with mean 0 and std 1 (the imputed ones sit at the mean)
    const after = trainingStats(d.xTrain, d.train, 2)
    expect(after.mean[0]).toBeCloseTo(0, 5)
    expect(after.std[0]).toBeCloseTo(1, 5)
    expect(d.yTrain).toEqual(raw.yTrain) // the target stays in its own units
  })

  it('statistics ignore the test rows, missing values and constant columns', () => {
    const x = new Float32Array([1, 5, NaN, 5, 3, 5, 1000, 5]) // 4 rows × 2 features; the last row is a test row
    const { mean, std } = trainingStats(x, 3, 2)
    expect([...mean]).toEqual([2, 5])
    expect(std[0]).toBeCloseTo(1, 10)
    expect(std[1]).toBe(1) // constant: centred only
  })
})

describe('a classifier on a text target', () => {
  // 120 rows: id, f (numbers), label: 'yes' where id % 4 === 0, else 'no'; no label in rows 5, 6, 7
  const labelOf = (id: number) => (id >= 5 && id <= 7 ? 'NA' : id % 4 === 0 ? 'yes' : 'no')
  let source: DataSource
  const storeDir = join(dir, 'store')
  beforeAll(async () => {
    const lines = ['id,f,label', ...Array.from({ length: 120 }, (_, id) => `${id},${(id * 37) % 101},${labelOf(id)}`)]
    writeFileSync(join(dir, 'labels.csv'), lines.join('\n'))
    const info = await loadDataFile(join(dir, 'labels.csv'), storeDir)
    source = { sha256: info.sha256, name: info.name, target: 'label', features: null, exclude: [], impute: 'none' }
  })

  async function classifierData(size: number, overrides: Partial<BenchConfig> = {}) {
    const config = { ...presetConfig('smoke', { model: { kind: 'gbdt' } }), sizes: [size], seed: 9, testSplit: 0.25, ...overrides, data: source }
    const resolved = await resolveDataSource(storeDir, config)
    return { resolved, dataset: datasetFor(workloadFor(resolved.config, size, resolved.workload, resolved.task)) }
  }

  it("labels are class indices in the task's order (no = 0, yes = 1), each row's own; rows without a label are never sampled", async () => {
    const { resolved, dataset } = await classifierData(100)
    expect(resolved.task.classes).toEqual(['no', 'yes'])
    expect(dataset.spec.task).toEqual({ objective: 'binary', classes: 2 })
    expect(dataset).toMatchObject({ train: 75, test: 25 })
    const ids = [...dataset.xTrain.filter((_, i) => i % 2 === 0), ...dataset.xTest.filter((_, i) => i % 2 === 0)]
    const labels = [...dataset.yTrain, ...dataset.yTest]
    expect(new Set(ids).size).toBe(100)
    ids.forEach((id, k) => {
      expect(labelOf(id)).not.toBe('NA')
      expect(labels[k]).toBe(labelOf(id) === 'yes' ? 1 : 0)
    })
  })

  it('the class values decide the indices: classes listed yes, no make yes 0', async () => {
    const { resolved } = await classifierData(100)
    const reversed: WorkloadData = { ...resolved.workload, classValues: [1, 0] }
    const dataset = datasetFor(workloadFor(resolved.config, 100, reversed, { objective: 'binary', classes: ['yes', 'no'] }))
    const ids = dataset.xTrain.filter((_, i) => i % 2 === 0)
    ids.forEach((id, k) => expect(dataset.yTrain[k]).toBe(labelOf(id) === 'yes' ? 0 : 1))
  })

  it('the training rows are stratified: every fold of 2 to 5 holds the classes in the proportions of the whole (±1 row)', async () => {
    const { dataset } = await classifierData(117, { testSplit: 0.2 })
    const yes = dataset.yTrain.reduce((n, y) => n + y, 0)
    expect(yes).toBeGreaterThan(10)
    for (let folds = 2; folds <= 5; folds++) {
      for (let f = 0; f < folds; f++) {
        const { begin, end } = foldRows(dataset.train, folds, f)
        const inFold = dataset.yTrain.subarray(begin, end).reduce((n, y) => n + y, 0)
        expect(Math.abs(inFold - (yes * (end - begin)) / dataset.train)).toBeLessThanOrEqual(1)
      }
    }
  })
})
