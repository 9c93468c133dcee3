// The service refuses a data choice with the words the config panel shows for it (both call
// src-shared/data-check.ts): the file fakeDataSet() describes, loaded for real, is refused for the MLP
// with the message ConfigPanel.data.test.ts expects in the panel, field for field, and nothing starts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BenchConfig, type DataSetInfo, presetConfig, TrainpoolError } from '@shared/contract'
import { fakeDataSet, housesCsv } from '@shared/testing/data-sets'
import { loadDataFile } from '../data'
import { builtInWorkerFamilies } from '../engine/families'
import { RunStore } from '../store/run-store'
import { InProcessLauncher } from '../testing/in-process-launcher'
import { BenchService } from './bench-service'

const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-data-refusal-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let info: DataSetInfo
beforeAll(async () => {
  writeFileSync(join(dir, 'houses.csv'), housesCsv())
  info = await loadDataFile(join(dir, 'houses.csv'), join(dir, 'store'))
})

function config(sizes: number[]): BenchConfig {
  return {
    ...presetConfig('smoke'),
    sizes,
    backend: 'cpu',
    data: { sha256: info.sha256, name: info.name, target: 'price', features: null, exclude: [], impute: 'none' },
  }
}

async function refusal(c: BenchConfig): Promise<TrainpoolError> {
  const service = new BenchService({
    launcher: new InProcessLauncher(builtInWorkerFamilies),
    store: new RunStore(join(dir, 'store')),
    shell: 'cli',
    telemetry: false,
    probe: async () => [{ name: 'cpu', available: true, detail: 'test cpu' }] as never,
  })
  const error = await service.start({ config: c }).then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(TrainpoolError)
  expect(await service.listRuns()).toEqual([])
  return error as TrainpoolError
}

describe("the service refuses a data choice in the config panel's words", () => {
  it("the file is the one the panel's tests describe", () => {
    const described = fakeDataSet()
    expect(info.rows).toBe(described.rows)
    expect(info.columns).toEqual(described.columns)
  })

  it('the MLP on missing values, and a size beyond the file: each refusal on its field', async () => {
    const error = await refusal(config([5000]))
    expect(error.issues).toEqual([
      { field: 'sizes.0', message: 'sizes must be at most 1200: houses.csv has 1200 rows (got 5000)' },
      {
        field: 'data.impute',
        message:
          'the neural network (MLP) cannot train on missing values, and houses.csv has some in its features: "rooms" has 4 (of 1200 rows); impute them with the training rows\' mean (impute: mean), exclude those columns, or train gradient-boosted trees, which take them as they are',
      },
    ])
    expect(error.message).toBe('data: sizes must be at most 1200: houses.csv has 1200 rows (got 5000)')
  })
})
