// Test and benchmark support (not used by the app): runs real XGBoost through
// benchmarks/gbdt/xgb_reference.py on the same float32 data, and returns its JSON.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const XGB_REFERENCE_SCRIPT = fileURLToPath(new URL('../../../benchmarks/gbdt/xgb_reference.py', import.meta.url))

export interface XgbTree {
  left: number[]
  right: number[]
  /** −1 for a leaf */
  feature: number[]
  /** split value, or the leaf value for a leaf */
  threshold: number[]
  defaultLeft: number[]
}

export interface XgbModelResult {
  /** of the predictions; a classifier's: of its probabilities against the one-hot label */
  mse: number
  seconds: number
  cpuSeconds: number
  trees: XgbTree[]
  /** the test rows' outputs (predictions: true), row-major [rows, K] for multiclass */
  predictions?: number[]
}

export interface XgbResult {
  xgboost: string
  dmatrixSeconds: number
  models: XgbModelResult[]
}

export interface XgbModelSpec {
  rounds?: number
  maxDepth?: number
  eta?: number
  lambda?: number
  alpha?: number
  gamma?: number
  minChildWeight?: number
  maxBin?: number
  subsample?: number
  colsampleBytree?: number
  baseScore?: number
  seed?: number
  /** reg:squarederror (default), binary:logistic or multi:softprob with num_class = classes */
  objective?: 'regression' | 'binary' | 'multiclass'
  classes?: number
}

/** The interpreter: $TRAINPOOL_PYTHON, else /usr/bin/python3 (Debian's python3-xgboost), else python3. */
export function pythonForXgboost(): string {
  return process.env.TRAINPOOL_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3')
}

/** XGBoost's version when `python` can import it, else null. */
export function xgboostVersion(python = pythonForXgboost()): string | null {
  const r = spawnSync(python, ['-c', 'import xgboost, numpy; print(xgboost.__version__)'], { encoding: 'utf8' })
  return r.status === 0 ? r.stdout.trim() : null
}

export interface XgbData {
  rows: number
  features: number
  x: Float32Array
  y: Float32Array
}

const bytes = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)

/** Trains one XGBoost booster per spec on `train`, evaluates on `test`. */
export function runXgboost(
  train: XgbData,
  test: XgbData,
  models: XgbModelSpec[],
  trees: 'first' | 'all' | 'none' = 'first',
  python = pythonForXgboost(),
  predictions = false,
): XgbResult {
  const dir = mkdtempSync(join(tmpdir(), 'trainpool-xgb-'))
  try {
    writeFileSync(join(dir, 'xtr.f32'), bytes(train.x))
    writeFileSync(join(dir, 'ytr.f32'), bytes(train.y))
    writeFileSync(join(dir, 'xte.f32'), bytes(test.x))
    writeFileSync(join(dir, 'yte.f32'), bytes(test.y))
    const spec = {
      train: { x: join(dir, 'xtr.f32'), y: join(dir, 'ytr.f32'), rows: train.rows, features: train.features },
      test: { x: join(dir, 'xte.f32'), y: join(dir, 'yte.f32'), rows: test.rows },
      models,
      trees,
      predictions,
    }
    writeFileSync(join(dir, 'spec.json'), JSON.stringify(spec))
    const r = spawnSync(python, [XGB_REFERENCE_SCRIPT, join(dir, 'spec.json')], {
      encoding: 'utf8',
      maxBuffer: 1 << 30,
      env: { ...process.env, OMP_NUM_THREADS: '1' },
    })
    if (r.status !== 0) throw new Error(`xgb_reference.py failed (${r.status}): ${r.stderr}`)
    return JSON.parse(r.stdout) as XgbResult
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
