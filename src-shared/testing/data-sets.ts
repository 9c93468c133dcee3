// A loaded data set as the service describes it (DataSetInfo), for the renderer's, the fake's and the
// shells' tests: a small house-price table with a text column and missing values, so previews,
// column types, missing counts and the feature defaults all have something to show.
import type { DataSetInfo, DataSetRecord } from '../contract/dataset'

export const HOUSES_SHA = 'a'.repeat(63) + '1'

export function fakeDataSet(overrides: Partial<DataSetInfo> = {}): DataSetInfo {
  return {
    sha256: HOUSES_SHA,
    name: 'houses.csv',
    path: '/home/u/data/houses.csv',
    format: 'csv',
    bytes: 48_213,
    rows: 1_200,
    columns: [
      { name: 'area', type: 'numeric', missing: 0, min: 21, max: 310, firstTextRow: null },
      { name: 'rooms', type: 'numeric', missing: 4, min: 1, max: 9, firstTextRow: null },
      { name: 'city', type: 'text', missing: 0, min: null, max: null, firstTextRow: 1 },
      { name: 'age', type: 'numeric', missing: 0, min: 0, max: 120, firstTextRow: null },
      { name: 'price', type: 'numeric', missing: 0, min: 52_000, max: 1_900_000, firstTextRow: null },
    ],
    preview: [
      ['84', '3', 'Lyon', '12', '310000'],
      ['120', '', 'Paris', '40', '890000'],
      ['45', '2', 'Nantes', '3', '150000'],
    ],
    loadedAt: '2026-12-02T20:00:00.000Z',
    loadMs: 42,
    ...overrides,
  }
}

/**
 * The file fakeDataSet() describes, as CSV text: the same columns, types and missing counts over the
 * same 1 200 rows, so a Node test can load it and get the refusals the panel shows for the fake.
 */
export function housesCsv(): string {
  const cities = ['Lyon', 'Paris', 'Nantes']
  const lines = ['area,rooms,city,age,price']
  for (let i = 0; i < 1_200; i++) {
    const area = 21 + ((i * 37) % 290)
    const rooms = i % 300 === 1 ? '' : String(1 + (i % 9))
    const price = i === 0 ? 52_000 : i === 1 ? 1_900_000 : 60_000 + area * 3_000
    lines.push(`${area},${rooms},${cities[i % 3]},${i % 121},${price}`)
  }
  return lines.join('\n')
}

/** What a run on fakeDataSet() records (result.dataset): price from area, rooms and age, rooms imputed. */
export function fakeDataSetRecord(overrides: Partial<DataSetRecord> = {}): DataSetRecord {
  return {
    name: 'houses.csv',
    sha256: HOUSES_SHA,
    rows: 1_200,
    columns: 5,
    target: 'price',
    features: ['area', 'rooms', 'age'],
    targetStats: { mean: 412_345.678, std: 98_765.4321, min: 52_000, max: 1_900_000 },
    impute: 'mean',
    imputed: { rooms: 4 },
    standardised: true,
    sampleSeed: 42,
    ...overrides,
  }
}
