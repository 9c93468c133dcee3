// Trainpool's trees saved as XGBoost JSON are loaded by real XGBoost 1.7 (Debian's python3-xgboost,
// Booster.load_model) and predict what Trainpool predicted on held-out rows, missing values included.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ModelArtifactSchema } from '@shared/contract'
import { predictGbdt, prepareGbdtData, trainGbdtGroup, treesArtifact } from '../engine/gbdt'
import { pythonForXgboost, xgboostVersion } from '../engine/gbdt/xgb-reference'
import { skipWithout } from '../testing/capability'
import { xgboostJson } from './xgboost-json'

const PREDICT = `
import sys, json, numpy as np, xgboost as xgb
model, xfile, rows, feats = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
b = xgb.Booster(); b.load_model(model)
x = np.fromfile(xfile, dtype=np.float32).reshape(rows, feats)
print(json.dumps([float(v) for v in b.predict(xgb.DMatrix(x, missing=np.nan))]))
`

/** seeded rows: a smooth target of 6 features, 5 % missing */
function rowsOf(n: number, features: number, seed: number) {
  let s = seed
  const rand = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  const x = new Float32Array(n * features)
  const y = new Float32Array(n)
  for (let r = 0; r < n; r++) {
    for (let f = 0; f < features; f++) x[r * features + f] = rand() < 0.05 ? NaN : rand() * 10
    const v = (f: number) => (Number.isNaN(x[r * features + f]) ? 5 : x[r * features + f])
    y[r] = Math.sin(v(0)) + 0.3 * v(1) - 0.1 * v(2) * v(3) + 0.05 * rand()
  }
  return { x, y }
}

describe('trees as XGBoost JSON', () => {
  it('XGBoost 1.7 loads them and predicts what Trainpool predicted', (ctx) => {
    const version = xgboostVersion()
    if (skipWithout('xgboost', version !== null, `${pythonForXgboost()} cannot import xgboost (apt-get install python3-xgboost)`))
      ctx.skip('python3 lacks xgboost')
    const F = 6
    const train = rowsOf(800, F, 7)
    const test = rowsOf(200, F, 11)
    const data = prepareGbdtData(train.x, train.y, 800, F, 64)
    const models = trainGbdtGroup(data, { rounds: 12, maxDepth: 4, eta: 0.3, maxBin: 64, baseScore: 0.25 }, [3, 4])
    const dir = mkdtempSync(join(tmpdir(), 'trainpool-xgbjson-'))
    try {
      writeFileSync(join(dir, 'x.f32'), Buffer.from(test.x.buffer))
      for (const [k, model] of models.entries()) {
        const artifact = ModelArtifactSchema.parse(JSON.parse(JSON.stringify(treesArtifact(model)))) as ReturnType<typeof treesArtifact>
        writeFileSync(join(dir, `m${k}.json`), xgboostJson(artifact))
        const r = spawnSync(pythonForXgboost(), ['-c', PREDICT, join(dir, `m${k}.json`), join(dir, 'x.f32'), '200', String(F)], { encoding: 'utf8' })
        expect(r.status, r.stderr).toBe(0)
        const theirs = JSON.parse(r.stdout) as number[]
        const ours = predictGbdt(model, test.x, 200, F)
        // float32 sums in tree order on both sides: equal up to float32 rounding of the base score's sum
        for (let i = 0; i < 200; i++) expect(Math.abs(theirs[i] - ours[i]), `row ${i}`).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(ours[i])))
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('a base score whose float32 has no short float64 spelling (0.3) reaches XGBoost: its parser once silently kept 0.5 instead', (ctx) => {
    if (skipWithout('xgboost', xgboostVersion() !== null, `${pythonForXgboost()} cannot import xgboost (apt-get install python3-xgboost)`))
      ctx.skip('python3 lacks xgboost')
    const leaf = { feature: [-1], threshold: [0], defaultLeft: [0 as const], left: [-1], leafValue: [0.25] }
    const dir = mkdtempSync(join(tmpdir(), 'trainpool-xgbjson-'))
    try {
      writeFileSync(join(dir, 'x.f32'), Buffer.from(new Float32Array([1, 2]).buffer))
      const json = xgboostJson({ format: 'gbdt-trees', features: 1, baseScore: 0.3, trees: [leaf] })
      expect(JSON.parse(json).learner.learner_model_param.base_score).toBe('0.3')
      writeFileSync(join(dir, 'm.json'), json)
      const r = spawnSync(pythonForXgboost(), ['-c', PREDICT, join(dir, 'm.json'), join(dir, 'x.f32'), '2', '1'], { encoding: 'utf8' })
      expect(r.status, r.stderr).toBe(0)
      for (const p of JSON.parse(r.stdout) as number[]) expect(p).toBeCloseTo(Math.fround(0.3) + 0.25, 6)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
