// Trained MLPs as ONNX inference models: a run keeps them (onnxruntime and wasm backends, a model set
// with two widths), export-models writes .onnx files that ONNX Runtime loads and that predict what
// Trainpool predicted — their test MSE on the run's own test rows is the recorded one (≤ 1e-5
// relative) — and that Debian's onnx 1.12 checker accepts; the preprocessing of the user's data
// (missing → mean, then standardise) is in the graph.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { onnx } from 'onnx-proto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type ModelArtifact, modelFileName, type ModelSet, presetConfig, setSize, workloadFor } from '@shared/contract'
import { exportModelsCommand } from '../cli/export-models-command'
import { datasetFor } from '../engine/datasets/generated'
import { builtInWorkerFamilies } from '../engine/families'
import { loadOrt } from '../engine/mlp-onnx/ort-runtime'
import { BenchService } from '../service/bench-service'
import { RunStore } from '../store/run-store'
import { skipWithout } from '../testing/capability'
import { InProcessLauncher } from '../testing/in-process-launcher'
import { onnxModel } from './onnx-model'

const PYTHON = '/usr/bin/python3'
const hasOnnxChecker = () => spawnSync(PYTHON, ['-c', 'import onnx'], { encoding: 'utf8' }).status === 0

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trainpool-onnx-export-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

async function predict(model: Uint8Array, x: Float32Array, rows: number, features: number): Promise<Float32Array> {
  const ort = loadOrt()
  const session = await ort.InferenceSession.create(model)
  const out = await session.run({ features: new ort.Tensor('float32', x, [rows, features]) })
  return out.prediction.data as Float32Array
}

describe('MLPs out as ONNX', () => {
  for (const backend of ['onnxruntime', 'wasm'] as const) {
    it(`${backend}: exported models load in ONNX Runtime with the recorded test MSE, and pass onnx.checker`, async (ctx) => {
      const store = new RunStore(join(dir, 'runs'))
      const service = new BenchService({
        launcher: new InProcessLauncher(builtInWorkerFamilies),
        store,
        shell: 'cli',
        telemetry: false,
        probe: async () => [{ name: backend, available: true, detail: 'test' }] as never,
      })
      const set: ModelSet = { grid: { hidden: [[8], [16, 4]] }, seeds: 1, folds: null }
      const config = presetConfig('smoke', {
        sizes: [400],
        workers: [2],
        backend,
        strategies: ['sequential', 'batched'],
        models: [setSize(set)],
        set,
        model: { kind: 'mlp', epochs: 2, batchSize: 64 } as never,
      })
      const { runId } = await service.start({ config })
      const run = await service.waitForRun(runId)
      await service.shutdown()
      expect(run.status).toBe('ok')
      expect(run.keptModels).toMatchObject({ size: 400, strategy: 'sequential', count: 2, format: 'mlp' })
      const out = join(dir, 'models')
      expect(await exportModelsCommand(runId, { all: true, out, store: store.dir })).toBe(0)
      const files = readdirSync(out).sort()
      // each file named by its model and configuration, which its metadata holds too
      expect(files).toEqual([`trainpool-${runId}-model-0-hidden-8.onnx`, `trainpool-${runId}-model-1-hidden-16-4.onnx`])
      expect(files).toEqual([0, 1].map((i) => modelFileName(run, i, 'onnx')))
      const metadata = onnx.ModelProto.decode(readFileSync(join(out, files[1]))).metadataProps
      expect(Object.fromEntries(metadata.map((p) => [p.key, p.value]))).toMatchObject({
        trainpool_run: runId,
        trainpool_model: '1',
        trainpool_configuration: 'hidden 16,4',
      })
      const data = datasetFor(workloadFor(run.config, 400))
      const recorded = run.measurements.find((m) => m.strategy === 'sequential')!.perModel
      for (const [i, file] of files.entries()) {
        const pred = await predict(readFileSync(join(out, file)), data.xTest, data.test, run.config.features)
        let sse = 0
        for (let r = 0; r < data.test; r++) sse += (pred[r] - data.yTest[r]) ** 2
        const want = recorded.find((p) => p.index === i)!.testMse
        expect(Math.abs(sse / data.test - want) / want, `model ${i}`).toBeLessThan(1e-5)
      }
      if (
        skipWithout(
          'onnx',
          hasOnnxChecker(),
          `${PYTHON} cannot import onnx (apt-get install python3-onnx): the exported files were not checked by onnx.checker`,
        )
      )
        return ctx.skip('no onnx checker')
      const check = spawnSync(
        PYTHON,
        ['-c', 'import sys, onnx\nfor p in sys.argv[1:]: onnx.checker.check_model(onnx.load(p), full_check=True)', ...files.map((f) => join(out, f))],
        { encoding: 'utf8' },
      )
      expect(check.status, check.stderr).toBe(0)
    }, 120_000)
  }

  it("the user data's preprocessing is in the graph: a missing value becomes the mean, then standardised", async () => {
    const artifact: Extract<ModelArtifact, { format: 'mlp' }> = {
      format: 'mlp',
      features: 2,
      layers: [
        { inputs: 2, outputs: 2, w: [1, -1, 0.5, 2], b: [0.1, 0.2] },
        { inputs: 2, outputs: 1, w: [1.5, -0.5], b: [0.3] },
      ],
      preprocess: { mean: [10, -2], std: [4, 0.5], impute: true, standardise: true },
    }
    const raw = Float32Array.from([14, -1, NaN, -2.5, 2, NaN])
    const pred = await predict(onnxModel(artifact), raw, 3, 2)
    const forward = (a: number, b: number) => {
      const x = [(Number.isNaN(a) ? 10 : a) - 10, (Number.isNaN(b) ? -2 : b) + 2].map((v, f) => v / [4, 0.5][f])
      const h = [0, 1].map((o) => Math.max(0, x[0] * artifact.layers[0].w[o] + x[1] * artifact.layers[0].w[2 + o] + artifact.layers[0].b[o]))
      return h[0] * 1.5 + h[1] * -0.5 + 0.3
    }
    expect([...pred].map((v) => v.toFixed(5))).toEqual([forward(14, -1), forward(NaN, -2.5), forward(2, NaN)].map((v) => v.toFixed(5)))
  })
})
