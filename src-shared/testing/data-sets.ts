// A loaded data set as the service describes it (DataSetInfo), for the renderer's, the fake's and the
// shells' tests: a small house-price table with a text column and missing values, so previews,
// column types, missing counts and the feature defaults all have something to show; and a churn
// table whose last column is a yes/no label (a classifier's target) beside a three-valued plan.
import { DATA_CACHE_VERSION, type DataSetInfo, type DataSetRecord } from '../contract/dataset'

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
      { name: 'rooms', type: 'numeric', missing: 4, min: 1, max: 9, firstTextRow: null, distinct: [1, 2, 3, 4, 5, 6, 7, 8, 9] },
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
    // 120 distinct city names: a text column with too many values to be class labels (churnDataSet has labels)
    lines.push(`${area},${rooms},${cities[i % 3]} ${i % 40},${i % 121},${price}`)
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

export const CHURN_SHA = 'c'.repeat(63) + '2'

/** A churn table (cached in the current layout): two numeric features, a 0–3 integer column, a text plan of three values, and the yes/no target `churn`, last. */
export function churnDataSet(overrides: Partial<DataSetInfo> = {}): DataSetInfo {
  return {
    sha256: CHURN_SHA,
    name: 'churn.csv',
    path: '/home/u/data/churn.csv',
    format: 'csv',
    bytes: 9_870,
    rows: 400,
    columns: [
      { name: 'tenure', type: 'numeric', missing: 0, min: 1, max: 72, firstTextRow: null },
      { name: 'monthly', type: 'numeric', missing: 0, min: 18.5, max: 118.75, firstTextRow: null },
      { name: 'calls', type: 'numeric', missing: 0, min: 0, max: 3, firstTextRow: null, distinct: [0, 1, 2, 3] },
      { name: 'plan', type: 'text', missing: 0, min: null, max: null, firstTextRow: 1, levels: ['basic', 'family', 'pro'] },
      { name: 'churn', type: 'text', missing: 0, min: null, max: null, firstTextRow: 1, levels: ['no', 'yes'] },
    ],
    preview: [
      ['12', '29.85', '0', 'basic', 'no'],
      ['34', '56.95', '2', 'pro', 'yes'],
      ['2', '53.85', '1', 'family', 'no'],
    ],
    loadedAt: '2026-12-03T10:00:00.000Z',
    loadMs: 12,
    cacheVersion: DATA_CACHE_VERSION,
    ...overrides,
  }
}
