// onnxruntime trains the data set the result records: with the user's file, the file's rows (it once
// generated data from the seed instead, while the result, the report and History named the file).
// The family builds the data set and hands it to the backend (families/seam.ts); no session is
// needed to prepare it, so this runs where onnxruntime-node cannot load too.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { presetConfig, type Workload, workloadFor } from '@shared/contract'
import type { MlpParams } from '@shared/families/mlp'
import { loadDataFile, tablePath } from '../../data'
import { datasetFor } from '../datasets/generated'
import { mlpWorkerFamily } from '../families/mlp'
import { onnxRuntimeBackend } from './onnx-backend'

const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-onnx-user-data-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// row r: a = r, b = 1000 + r, y = 3r: values no generated data set holds
let workload: Workload<MlpParams>
beforeAll(async () => {
  writeFileSync(join(dir, 'rows.csv'), ['a,b,y', ...Array.from({ length: 80 }, (_, r) => `${r},${1000 + r},${3 * r}`)].join('\n'))
  const info = await loadDataFile(join(dir, 'rows.csv'), join(dir, 'store'))
  const data = {
    table: tablePath(join(dir, 'store'), info.sha256),
    sha256: info.sha256,
    targetColumn: 2,
    featureColumns: [0, 1],
    impute: 'none' as const,
    standardise: false,
  }
  workload = workloadFor({ ...presetConfig('smoke'), testSplit: 0.25 }, 60, data) as Workload<MlpParams>
})

it("prepares the user's rows, the same data set the other backends train on", () => {
  // the family builds the data set; onnxruntime's prepare (which reads nothing of its runtime) lays it out
  const family = mlpWorkerFamily.prepare({} as never, workload)
  const prepared = onnxRuntimeBackend.prepare({} as never, family.dataset, workload)
  const expected = datasetFor(workload)
  expect(prepared.dataset.yTrain).toEqual(expected.yTrain)
  expect(prepared.dataset.xTrain).toEqual(expected.xTrain)
  expect(prepared.dataset.yTest).toEqual(expected.yTest)
  // the test rows with their ones column are the file's rows: b = 1000 + a, y = 3a
  for (let r = 0; r < prepared.dataset.test; r++) {
    const [a, b, one] = prepared.xTest.subarray(r * 3, r * 3 + 3)
    expect([b, one, prepared.dataset.yTest[r]]).toEqual([1000 + a, 1, 3 * a])
  }
})
