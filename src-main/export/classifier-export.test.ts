// Classifiers out: trees saved as XGBoost JSON with XGBoost's own objective (binary:logistic,
// multi:softprob with num_class and tree_info) are loaded by real XGBoost 1.7 and predict the
// probabilities Trainpool's trees give; an MLP classifier's ONNX model outputs `probabilities`
// (Sigmoid / Softmax) that ONNX Runtime computes as a hand forward pass does, and onnx.checker
// accepts; both files name their classes in order; the best model is the best in the run's primary
// metric, in its direction; and an xgboost run exported end to end (export-models, Save best model)
// gives, in XGBoost's hands, the log loss the run recorded.
import { seededRandom as random } from '@shared/testing/random'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { onnx } from 'onnx-proto'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  type KeptModels,
  type ModelArtifact,
  ModelArtifactSchema,
  type ModelSet,
  modelFileName,
  type PerModel,
  presetConfig,
  setSize,
  type Task,
  type TreeArtifact,
  workloadFor,
} from '@shared/contract'
import { scoreOutputs, sigmoid, softmaxInPlace } from '@shared/metrics'
import { exportModelsCommand } from '../cli/export-models-command'
import { datasetFor } from '../engine/datasets/generated'
import { pythonForXgboost, xgboostVersion } from '../engine/gbdt/xgb-reference'
import { type GbdtModel, predictGbdt } from '../engine/gbdt/tree'
import { loadOrt } from '../engine/mlp-onnx/ort-runtime'
import { NodeLauncher } from '../pool/node-launcher'
import { BenchService } from '../service/bench-service'
import { probeInWorker } from '../service/backend-probe'
import { RunStore } from '../store/run-store'
import { skipWithout } from '../testing/capability'
import { fakeTreesRun } from '../testing/run-fixtures'
import { bestModelIndex, modelFiles } from './models'
import { onnxModel } from './onnx-model'
import { xgboostJson } from './xgboost-json'

const PYTHON = '/usr/bin/python3'

/** Each model file's probabilities [rows·K] by XGBoost 1.7, its objective, num_class, tree_info and the classes attribute. */
const XGBOOST_PREDICT = `
import sys, json, numpy as np, xgboost as xgb
x = np.fromfile(sys.argv[1], dtype=np.float32).reshape(int(sys.argv[2]), int(sys.argv[3]))
out = {}
for path in sys.argv[4:]:
    b = xgb.Booster(model_file=path)
    config = json.loads(b.save_config())['learner']
    out[path] = {
        'p': [float(v) for v in b.predict(xgb.DMatrix(x, missing=np.nan)).reshape(-1)],
        'objective': config['objective']['name'],
        'num_class': config['learner_model_param']['num_class'],
        'classes': b.attr('trainpool_classes'),
    }
print(json.dumps(out))
`

interface XgboostView {
  p: number[]
  objective: string
  num_class: string
  classes: string | null
}

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trainpool-classifier-export-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const needXgboost = (ctx: { skip: (note?: string) => never }) => {
  if (skipWithout('xgboost', xgboostVersion() !== null, `${pythonForXgboost()} cannot import xgboost (apt-get install python3-xgboost)`))
    ctx.skip('python3 lacks xgboost')
}

function xgboostPredict(x: Float32Array, rows: number, features: number, paths: string[]): Record<string, XgboostView> {
  writeFileSync(join(dir, 'x.f32'), Buffer.from(x.buffer, x.byteOffset, x.byteLength))
  const r = spawnSync(pythonForXgboost(), ['-c', XGBOOST_PREDICT, join(dir, 'x.f32'), String(rows), String(features), ...paths], { encoding: 'utf8' })
  expect(r.status, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as Record<string, XgboostView>
}

/** A full tree of depth 3 in breadth-first order: random split features, float32 thresholds in [0, 1), default directions and leaves. */
function randomTree(next: () => number, features: number): TreeArtifact {
  const internal = 7
  const n = 15
  const leaf = (i: number) => i >= internal
  return {
    feature: Array.from({ length: n }, (_, i) => (leaf(i) ? -1 : Math.floor(next() * features))),
    threshold: Array.from({ length: n }, (_, i) => (leaf(i) ? 0 : Math.fround(next()))),
    defaultLeft: Array.from({ length: n }, (_, i) => (leaf(i) || next() < 0.5 ? 0 : 1)),
    left: Array.from({ length: n }, (_, i) => (leaf(i) ? -1 : 2 * i + 1)),
    leafValue: Array.from({ length: n }, (_, i) => (leaf(i) ? Math.fround((next() - 0.5) * 0.6) : 0)),
  }
}

/** rows in [0, 1) with 10 % missing */
function rowsOf(rows: number, features: number, next: () => number): Float32Array {
  return Float32Array.from({ length: rows * features }, () => (next() < 0.1 ? NaN : next()))
}

/**
 * Trainpool's trees' probabilities: each class's margin is predictGbdt (float32 sums in tree order,
 * as XGBoost) over its trees from its initial margin — binary: logit(baseScore), as binary:logistic
 * takes base_score; multiclass: baseScore itself — then the sigmoid or the softmax.
 */
function treesProbabilities(artifact: Extract<ModelArtifact, { format: 'gbdt-trees' }>, x: Float32Array, rows: number): Float64Array {
  const K = artifact.objective === 'multiclass' ? artifact.classes! : 1
  const start = artifact.objective === 'binary' ? Math.fround(-Math.log(1 / artifact.baseScore - 1)) : Math.fround(artifact.baseScore)
  const margins = Array.from({ length: K }, (_, k) => {
    const model = {
      features: artifact.features,
      baseScore: start,
      trees: artifact.trees
        .filter((_, t) => t % K === k)
        .map((t) => ({
          feature: Int32Array.from(t.feature),
          threshold: Float32Array.from(t.threshold),
          defaultLeft: Uint8Array.from(t.defaultLeft),
          left: Int32Array.from(t.left),
          leafValue: Float32Array.from(t.leafValue),
        })),
    } as unknown as GbdtModel
    return predictGbdt(model, x, rows)
  })
  const p = new Float64Array(rows * K)
  for (let r = 0; r < rows; r++) {
    if (K === 1) p[r] = sigmoid(margins[0][r])
    else {
      for (let k = 0; k < K; k++) p[r * K + k] = margins[k][r]
      softmaxInPlace(p, r * K, K)
    }
  }
  return p
}

describe('tree classifiers as XGBoost JSON', () => {
  const F = 5
  const ROWS = 300
  type Trees = Extract<ModelArtifact, { format: 'gbdt-trees' }>
  const CASES: { what: string; head: Omit<Trees, 'trees'>; classes: string[] }[] = [
    {
      what: 'binary (binary:logistic, base_score 0.3 a probability)',
      head: { format: 'gbdt-trees', features: F, baseScore: 0.3, objective: 'binary', classes: 2 },
      classes: ['no', 'yes'],
    },
    {
      what: 'multiclass of 4 (multi:softprob, 4 trees a round)',
      head: { format: 'gbdt-trees', features: F, baseScore: 0.5, objective: 'multiclass', classes: 4 },
      classes: ['cat', 'dog', 'bird', 'fish'],
    },
  ]

  it('XGBoost 1.7 loads them and predicts the probabilities Trainpool’s trees give; the objective, num_class, tree_info and class names travel', (ctx) => {
    needXgboost(ctx)
    const next = random(38)
    const x = rowsOf(ROWS, F, next)
    // six rounds of random depth-3 trees (one a round for binary, K for multiclass), through the readers' check
    const artifacts = CASES.map(({ head }) => {
      const perRound = head.objective === 'multiclass' ? head.classes! : 1
      return ModelArtifactSchema.parse({ ...head, trees: Array.from({ length: 6 * perRound }, () => randomTree(next, F)) }) as Trees
    })
    const paths = CASES.map(({ classes }, i) => {
      const path = join(dir, `classifier-${i}.json`)
      writeFileSync(path, xgboostJson(artifacts[i], { trainpool_classes: JSON.stringify(classes) }))
      return path
    })
    const theirs = xgboostPredict(x, ROWS, F, paths)
    for (const [i, { what, classes }] of CASES.entries()) {
      const artifact = artifacts[i]
      const view = theirs[paths[i]]
      const K = artifact.objective === 'multiclass' ? artifact.classes! : 1
      expect(view.objective, what).toBe(artifact.objective === 'binary' ? 'binary:logistic' : 'multi:softprob')
      expect(view.num_class, what).toBe(artifact.objective === 'binary' ? '0' : String(K))
      expect(JSON.parse(view.classes!), what).toEqual(classes)
      const learner = JSON.parse(readFileSync(paths[i], 'utf8')).learner
      expect(learner.gradient_booster.model.tree_info).toEqual(artifact.trees.map((_, t) => t % K))
      expect(learner.gradient_booster.model.gbtree_model_param.num_trees).toBe(String(artifact.trees.length))
      if (K > 1) expect(learner.objective.softmax_multiclass_param).toEqual({ num_class: String(K) })
      else expect(learner.objective.reg_loss_param).toEqual({ scale_pos_weight: '1' })
      // probabilities: the ones Trainpool's trees give, to float32 rounding
      const ours = treesProbabilities(artifact, x, ROWS)
      expect(view.p, what).toHaveLength(ROWS * K)
      let worst = 0
      for (let j = 0; j < ours.length; j++) worst = Math.max(worst, Math.abs(view.p[j] - ours[j]))
      expect(worst, what).toBeLessThanOrEqual(1e-6)
      // and they are probabilities that vary: not a regression output, not a constant
      expect(Math.min(...view.p)).toBeGreaterThan(0)
      expect(Math.max(...view.p)).toBeLessThan(1)
      expect(new Set(view.p.map((p) => p.toFixed(3))).size).toBeGreaterThan(10)
    }
  })
})

describe('MLP classifiers as ONNX', () => {
  const F = 3
  const hidden = { inputs: F, outputs: 4, w: [0.5, -1, 0.25, 2, -0.5, 1.5, 1, -0.75, 0.3, 0.8, -1.2, 0.6], b: [0.1, -0.2, 0.05, 0] }
  const preprocess = { mean: [1, -2, 0.5], std: [2, 0.5, 1.5], impute: true, standardise: true }
  const binary: Extract<ModelArtifact, { format: 'mlp' }> = {
    format: 'mlp',
    features: F,
    layers: [hidden, { inputs: 4, outputs: 1, w: [1.5, -0.5, 0.7, -1.1], b: [0.3] }],
    preprocess,
    objective: 'binary',
    classes: 2,
  }
  const multiclass: Extract<ModelArtifact, { format: 'mlp' }> = {
    format: 'mlp',
    features: F,
    layers: [hidden, { inputs: 4, outputs: 3, w: [1, -1, 0.5, -0.5, 2, 0.1, 0.9, -0.3, -1.4, 0.2, 0.4, 1.1], b: [0.2, -0.1, 0] }],
    preprocess,
    objective: 'multiclass',
    classes: 3,
  }
  const raw = Float32Array.from([3, -1, NaN, NaN, -2.5, 2, 0.2, 0.1, -4, 1, -2, 0.5])
  const ROWS = 4

  /** the artifact's forward pass by hand (float64): impute, standardise, ReLU layers, then the sigmoid or the softmax */
  function forward(artifact: Extract<ModelArtifact, { format: 'mlp' }>, row: number): number[] {
    let a = Array.from({ length: F }, (_, f) => {
      const v = raw[row * F + f]
      return ((Number.isNaN(v) ? preprocess.mean[f] : v) - preprocess.mean[f]) / preprocess.std[f]
    })
    artifact.layers.forEach((layer, k) => {
      const z = Array.from({ length: layer.outputs }, (_, o) => a.reduce((s, v, i) => s + v * layer.w[i * layer.outputs + o], layer.b[o]))
      a = k < artifact.layers.length - 1 ? z.map((v) => Math.max(0, v)) : z
    })
    if (artifact.objective === 'binary') return [sigmoid(a[0])]
    const p = Float64Array.from(a)
    softmaxInPlace(p, 0, p.length)
    return [...p]
  }

  async function run(model: Uint8Array) {
    const ort = loadOrt()
    const session = await ort.InferenceSession.create(model)
    expect(session.outputNames).toEqual(['probabilities'])
    const out = await session.run({ features: new ort.Tensor('float32', raw, [ROWS, F]) })
    return out.probabilities
  }

  it('binary: a Sigmoid after the last layer, one output p(class 1) named probabilities, as the hand forward pass', async () => {
    const p = await run(onnxModel(binary))
    expect(p.dims).toEqual([ROWS, 1])
    const want = Array.from({ length: ROWS }, (_, r) => forward(binary, r)[0])
    for (let r = 0; r < ROWS; r++) expect(Math.abs((p.data as Float32Array)[r] - want[r]), `row ${r}`).toBeLessThan(1e-6)
  })

  it('multiclass: a Softmax over the K outputs (axis 1), rows summing to 1, as the hand forward pass', async () => {
    const p = await run(onnxModel(multiclass))
    expect(p.dims).toEqual([ROWS, 3])
    const data = p.data as Float32Array
    for (let r = 0; r < ROWS; r++) {
      const want = forward(multiclass, r)
      for (let k = 0; k < 3; k++) expect(Math.abs(data[r * 3 + k] - want[k]), `row ${r} class ${k}`).toBeLessThan(1e-6)
      expect(Math.abs(data[r * 3] + data[r * 3 + 1] + data[r * 3 + 2] - 1)).toBeLessThan(1e-6)
    }
  })

  it('onnx.checker accepts both, and their metadata name the classes in output order', (ctx) => {
    const metadata = { trainpool_objective: 'multiclass', trainpool_classes: JSON.stringify(['a', 'b', 'c']) }
    const paths = [binary, multiclass].map((artifact, i) => {
      const path = join(dir, `mlp-${i}.onnx`)
      writeFileSync(path, onnxModel(artifact, metadata))
      return path
    })
    const props = onnx.ModelProto.decode(readFileSync(paths[1])).metadataProps
    expect(JSON.parse(props.find((p) => p.key === 'trainpool_classes')!.value!)).toEqual(['a', 'b', 'c'])
    if (
      skipWithout(
        'onnx',
        spawnSync(PYTHON, ['-c', 'import onnx'], { encoding: 'utf8' }).status === 0,
        `${PYTHON} cannot import onnx (apt-get install python3-onnx)`,
      )
    )
      return ctx.skip('no onnx checker')
    const check = spawnSync(PYTHON, ['-c', 'import sys, onnx\nfor p in sys.argv[1:]: onnx.checker.check_model(onnx.load(p), full_check=True)', ...paths], {
      encoding: 'utf8',
    })
    expect(check.status, check.stderr).toBe(0)
  })
})

describe('the best model is the best in the run’s primary metric, in its direction', () => {
  /** four kept models whose log loss and accuracy disagree on the best: log loss ranks model 2 first, accuracy model 1, AUC model 3, MSE model 0 */
  function classifierRun(metric: Task['metric'], folds = false) {
    const { run, kept } = fakeTreesRun(4)
    const scores = [
      { logloss: 0.5, accuracy: 0.7, auc: 0.8, mse: 0.1 },
      { logloss: 0.45, accuracy: 0.9, auc: 0.81, mse: 0.2 },
      { logloss: 0.3, accuracy: 0.8, auc: 0.82, mse: 0.15 },
      { logloss: 0.4, accuracy: 0.75, auc: 0.95, mse: 0.12 },
    ]
    run.task = { objective: 'binary', classes: ['no', 'yes'], metric, auto: true }
    const measured = run.measurements[0]
    measured.perModel = measured.perModel.map((p, i): PerModel => {
      // with folds the held-out scores rank, the test scores the other way round
      const test = folds ? scores[3 - i] : scores[i]
      const heldOut = folds ? { configuration: 0, fold: i, validationMse: scores[i].mse, validationMetrics: scores[i] } : {}
      return { ...p, testMse: test.mse, metrics: test, ...heldOut }
    })
    if (folds) run.config = { ...run.config, set: { grid: {}, seeds: 1, folds: 4 } }
    return { run, kept }
  }

  it('log loss lowest, accuracy and AUC highest, MSE lowest; with folds the held-out scores', () => {
    for (const [metric, best] of [
      ['logloss', 2],
      ['accuracy', 1],
      ['auc', 3],
      ['mse', 0],
    ] as const) {
      const { run, kept } = classifierRun(metric)
      expect(bestModelIndex(run, kept), metric).toBe(best)
    }
    const { run, kept } = classifierRun('accuracy', true)
    expect(bestModelIndex(run, kept)).toBe(1)
  })

  it('the files of a classifier run name its classes (trainpool_objective, trainpool_classes); a regression run’s do not', () => {
    const { run, kept } = classifierRun('logloss')
    const binaryKept: KeptModels = {
      ...kept,
      models: kept.models.map((m) => ({
        ...m,
        artifact: { ...(m.artifact as Extract<ModelArtifact, { format: 'gbdt-trees' }>), objective: 'binary', classes: 2 },
      })),
    }
    const [file] = modelFiles(run, binaryKept, 'best')
    expect(file.index).toBe(2)
    const learner = JSON.parse(file.content as string).learner
    expect(learner.objective.name).toBe('binary:logistic')
    expect(learner.attributes).toMatchObject({ trainpool_objective: 'binary', trainpool_classes: '["no","yes"]' })
    const plain = fakeTreesRun(2)
    expect(JSON.parse(modelFiles(plain.run, plain.kept, 'best')[0].content as string).learner.attributes).not.toHaveProperty('trainpool_classes')
  })
})

describe('an xgboost classifier run out end to end', () => {
  it('export-models and Save best model: XGBoost’s probabilities on the run’s test rows give its recorded log loss; the best has the lowest held-out log loss', async (ctx) => {
    needXgboost(ctx)
    const launcher = new NodeLauncher()
    const xgboost = (await probeInWorker(launcher)).find((b) => b.name === 'xgboost')
    if (skipWithout('xgboost', xgboost?.available === true, `no libxgboost: ${xgboost?.detail ?? 'not probed'}`)) return ctx.skip('no libxgboost')
    const store = new RunStore(join(dir, 'runs'))
    const service = new BenchService({ launcher, store, shell: 'cli', telemetry: false, probe: async () => [xgboost!] })
    const set: ModelSet = { grid: { maxDepth: [2, 4] }, seeds: 1, folds: 2 }
    const config = presetConfig('smoke', {
      sizes: [800],
      workers: [1],
      backend: 'xgboost',
      strategies: ['sequential'],
      target: 'multiclass',
      classes: 3,
      features: 6,
      models: [setSize(set)],
      set,
      model: { kind: 'gbdt', rounds: 8 } as never,
    })
    let runId: string
    try {
      ;({ runId } = await service.start({ config }))
      const run = await service.waitForRun(runId)
      expect(run.status, run.error ?? '').toBe('ok')
      expect(run.task).toMatchObject({ objective: 'multiclass', classes: ['0', '1', '2'], metric: 'logloss' })
      expect(run.keptModels).toMatchObject({ count: 4, format: 'xgboost-json' })
      const out = join(dir, 'models')
      let said = ''
      vi.spyOn(process.stdout, 'write').mockImplementation(() => true)
      vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((said += String(chunk)), true))
      try {
        expect(await exportModelsCommand(runId, { all: true, out, store: store.dir })).toBe(0)
      } finally {
        vi.restoreAllMocks()
      }
      expect(said).toMatch(/^wrote 4 models .*predict\(\) is one probability per class, in the order 0, 1, 2 \(trainpool_classes\)\)\n$/)
      const paths = [0, 1, 2, 3].map((i) => join(out, modelFileName(run, i, 'json')))
      expect(readdirSync(out).sort()).toEqual(paths.map((p) => p.slice(out.length + 1)).sort())
      const data = datasetFor(workloadFor(run.config, 800, undefined, run.task))
      const theirs = xgboostPredict(data.xTest, data.test, 6, paths)
      const measured = run.measurements[0].perModel
      for (const [i, path] of paths.entries()) {
        expect(theirs[path]).toMatchObject({ objective: 'multi:softprob', num_class: '3', classes: '["0","1","2"]' })
        const recorded = measured.find((p) => p.index === i)!.metrics!.logloss!
        const logloss = scoreOutputs({ objective: 'multiclass', classes: 3 }, theirs[path].p, data.yTest).logloss!
        expect(Math.abs(logloss - recorded) / recorded, `model ${i}`).toBeLessThan(1e-9)
      }
      // Save best model (serve, the app) goes the same way: the best configuration's lowest held-out log loss
      const best = bestModelIndex(run, (await store.getModels(runId))!)!
      const saved = await service.bestModel({ runId })
      expect(saved.fileName).toBe(modelFileName(run, best, 'json'))
      const sameConfiguration = measured.filter((p) => p.configuration === measured.find((q) => q.index === best)!.configuration)
      expect(Math.min(...sameConfiguration.map((p) => p.validationMetrics!.logloss!))).toBe(measured.find((p) => p.index === best)!.validationMetrics!.logloss)
      const learner = JSON.parse(Buffer.from(saved.base64!, 'base64').toString('utf8')).learner
      expect(learner.attributes).toMatchObject({ trainpool_objective: 'multiclass', trainpool_classes: '["0","1","2"]' })
    } finally {
      await service.shutdown()
    }
  }, 120_000)
})
