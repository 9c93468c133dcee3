// A crafted models.json (a child index of 4294967290, a cycle, arrays of different lengths, a split
// feature beyond the features, MLP layers that do not chain) once hung export-models for minutes and
// froze `serve` in bestModel, or exported a file XGBoost 1.7's load_model crashed on. Now each is
// refused when the store reads it: export-models exits 2 with one line, bestModel rejects at once.
// And every artifact the check lets through, however mutated, is one real XGBoost loads and predicts.
import { seededRandom as random } from '@shared/testing/random'
import { spawnSync } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { type ModelArtifact, ModelArtifactSchema, type TreeArtifact } from '@shared/contract'
import { exportModelsCommand } from '../cli/export-models-command'
import { pythonForXgboost, xgboostVersion } from '../engine/gbdt/xgb-reference'
import { MODELS_FILE, RunStore } from '../store/run-store'
import { skipWithout } from '../testing/capability'
import { killAll, spawnCli } from '../testing/cli-process'
import { fakeTreesRun, stumpTree } from '../testing/run-fixtures'
import { makeService, tempDir } from '../testing/service-harness'
import { xgboostJson } from './xgboost-json'

const { run, kept } = fakeTreesRun()
let dir: string
let store: RunStore
beforeEach(async () => {
  dir = tempDir('crafted-models')
  store = new RunStore(join(dir, 'runs'))
  await store.save(run)
})
afterEach(() => {
  killAll()
  vi.restoreAllMocks()
})

const withTree = (patch: Partial<TreeArtifact>): ModelArtifact => ({
  format: 'gbdt-trees',
  features: 2,
  baseScore: 0.5,
  trees: [{ ...stumpTree(0), ...patch }],
})
/** node 1's left child is node 0, its parent */
const cycle: TreeArtifact = {
  feature: [0, 0, -1, -1, -1],
  threshold: [0.5, 0.5, 0, 0, 0],
  defaultLeft: [0, 0, 0, 0, 0],
  left: [1, 0, -1, -1, -1],
  leafValue: [0, 0, 1, 2, 3],
}
const mlpLayers = (hiddenInputs: number): ModelArtifact => ({
  format: 'mlp',
  features: 2,
  layers: [
    { inputs: 2, outputs: 3, w: new Array<number>(6).fill(0.1), b: [0, 0, 0] },
    { inputs: hiddenInputs, outputs: 1, w: new Array<number>(hiddenInputs).fill(0.1), b: [0] },
  ],
  preprocess: null,
})

/** a chain of `levels` splits, each with a leaf on the left: 2·levels + 1 nodes, within the node count of a depth-16 tree when levels ≤ 65 535 */
function chainTree(levels: number): TreeArtifact {
  const n = 2 * levels + 1
  const split = (i: number) => i % 2 === 0 && i < n - 1
  return {
    feature: Array.from({ length: n }, (_, i) => (split(i) ? 0 : -1)),
    threshold: Array.from({ length: n }, (_, i) => (split(i) ? 0.5 : 0)),
    defaultLeft: new Array<0 | 1>(n).fill(0),
    left: Array.from({ length: n }, (_, i) => (split(i) ? i + 1 : -1)),
    leafValue: Array.from({ length: n }, (_, i) => (split(i) ? 0 : 1)),
  }
}

/** each kind of crafted artifact (kept as model 1, model 0 sound) and the reason it is refused */
const CRAFTED: [string, ModelArtifact, RegExp][] = [
  ['a child index of 4294967290', withTree({ left: [4294967290, -1, -1] }), /tree 0, node 0: children 4294967290 and 4294967291 are not nodes after it/],
  ['a cycle', withTree(cycle), /node 1: children 0 and 1 are not nodes after it/],
  ['arrays of different lengths', withTree({ leafValue: [0, 1] }), /tree 0, leafValue has 2 entries but feature has 3/],
  ['a split feature beyond the features', withTree({ feature: [9, -1, -1] }), /node 0: split feature 9 is outside 0 to 1/],
  ['a tree 65 535 levels deep', withTree(chainTree(65_535)), /tree 0, node 33 is at depth 17: a tree is at most 16 levels deep/],
  ['MLP layers that do not chain', mlpLayers(5), /layer 1 takes 5 inputs but the layer before gives 3/],
]

function writeModels(artifact: ModelArtifact): void {
  const models = [kept.models[0], { index: 1, artifact }]
  writeFileSync(join(store.runDir(run.runId), MODELS_FILE), JSON.stringify({ ...kept, models }))
}

async function exportAll(out: string): Promise<{ code: number; stderr: string }> {
  let stderr = ''
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true)
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk)
    return true
  })
  try {
    return { code: await exportModelsCommand(run.runId, { all: true, out, store: store.dir }), stderr }
  } finally {
    vi.restoreAllMocks()
  }
}

describe('a crafted models.json is refused with its reason, never exported', () => {
  for (const [what, artifact, reason] of CRAFTED) {
    it(`${what}: export-models exits 2 with one line; bestModel rejects at once`, async () => {
      writeModels(artifact)
      const out = join(dir, 'out')
      const result = await exportAll(out)
      expect(result.code, result.stderr).toBe(2)
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(result.stderr).toMatch(/^trainpool export-models: run \S+: models\.json does not hold kept models that can be exported \(models\.1\.artifact: /)
      expect(result.stderr).toMatch(reason)
      expect(existsSync(out)).toBe(false)
      // the service's path (Save best model; through `serve`, the whole server waited on it)
      const { service } = makeService({ store })
      try {
        await expect(service.bestModel({ runId: run.runId })).rejects.toMatchObject({ code: 'damaged', message: expect.stringMatching(reason) })
      } finally {
        await service.shutdown()
      }
    }, 10_000)
  }

  it('the sound models still export', async () => {
    await store.saveModels(run.runId, kept)
    expect((await exportAll(join(dir, 'out'))).code).toBe(0)
  })
})

/** models.json whose tree 0 of model 0 has a threshold list of `numbers` entries ("0.5,0.5,…"), written without building it as a string */
function writeHugeThresholds(numbers: number): void {
  const fd = openSync(join(store.runDir(run.runId), MODELS_FILE), 'w')
  try {
    writeSync(
      fd,
      `{"size":300,"strategy":"fused","workers":1,"models":[{"index":0,"artifact":{"format":"gbdt-trees","features":2,"baseScore":0.5,"trees":[{"threshold":[`,
    )
    const block = Buffer.alloc(4 * 2 ** 20, '0.5,')
    for (let left = numbers * 4; left > 0; left -= block.length) writeSync(fd, block, 0, Math.min(block.length, left))
    writeSync(fd, '0.5]}]}}]}')
  } finally {
    closeSync(fd)
  }
}

describe('a models.json with a list longer than any run makes', () => {
  // one list of 150 M numbers (287 MB, under the file cap) killed export-models and `serve` in JSON.parse;
  // here 20 M (80 MB), in a CLI whose heap (128 MB) parsing it whole overflows
  it('export-models refuses it naming the list and its bound, exit 2, in a small heap', async () => {
    writeHugeThresholds(20_000_000)
    const out = join(dir, 'out')
    const cli = spawnCli('export-models', [run.runId, '--all', '--out', out, '--store', store.dir], [], { NODE_OPTIONS: '--max-old-space-size=128' })
    const exit = await cli.exited
    expect(exit, cli.out.stderr).toEqual({ code: 2, signal: null })
    expect(cli.out.stderr).toMatch(
      /^trainpool export-models: run \S+: models\.json does not hold kept models that can be exported \(models\.0\.artifact\.trees\.0\.threshold has more than 131071 entries: a tree of depth 16 has at most 131071 nodes\)\n$/,
    )
    expect(existsSync(out)).toBe(false)
  }, 60_000)

  it("bestModel (serve's path) rejects it as damaged, without reading it whole", async () => {
    writeHugeThresholds(20_000_000)
    const { service } = makeService({ store })
    const before = process.memoryUsage()
    try {
      await expect(service.bestModel({ runId: run.runId })).rejects.toMatchObject({
        code: 'damaged',
        message: expect.stringMatching(/trees\.0\.threshold has more than 131071 entries/),
      })
    } finally {
      await service.shutdown()
    }
    // the 80 MB text, or its parse, would show in one or the other
    const after = process.memoryUsage()
    expect(after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers)).toBeLessThan(40 * 2 ** 20)
  }, 60_000)
})

/** depth 2: root on feature 0, children on feature 1, four leaves */
const sevenNodes: TreeArtifact = {
  feature: [0, 1, 1, -1, -1, -1, -1],
  threshold: [0.5, 0.25, 0.75, 0, 0, 0, 0],
  defaultLeft: [1, 0, 1, 0, 0, 0, 0],
  left: [1, 3, 5, -1, -1, -1, -1],
  leafValue: [0, 0, 0, -1, -0.5, 0.5, 1],
}
const INDEX_VALUES = [-2, -1, 0, 1, 2, 3, 5, 6, 7, 8, 4294967290, 2147483647]

/** One to three entries of the seven-node tree (or its arrays' lengths) changed at random. */
function mutatedTrees(next: () => number): ModelArtifact {
  const tree = structuredClone(sevenNodes) as Record<keyof TreeArtifact, number[]>
  const keys = Object.keys(tree) as (keyof TreeArtifact)[]
  for (let k = 1 + Math.floor(next() * 3); k > 0; k--) {
    const key = keys[Math.floor(next() * keys.length)]
    const at = Math.floor(next() * 7)
    if (next() < 0.1) tree[key].pop()
    else if (key === 'defaultLeft') tree[key][at] = 1 - tree[key][at]
    else if (key === 'threshold' || key === 'leafValue') tree[key][at] = next() < 0.5 ? 1e39 : next()
    else tree[key][at] = INDEX_VALUES[Math.floor(next() * INDEX_VALUES.length)]
  }
  return { format: 'gbdt-trees', features: 2, baseScore: 0.5, trees: [tree as TreeArtifact, stumpTree(1)] }
}

/** The seven-node tree as XGBoost saves it, with one to three node entries changed at random (in the text: floats keep their spelling). */
function mutatedBooster(next: () => number): ModelArtifact {
  let json = xgboostJson({ format: 'gbdt-trees', features: 2, baseScore: 0.5, trees: [sevenNodes] })
  const tree = (JSON.parse(json) as { learner: { gradient_booster: { model: { trees: Record<string, number[]>[] } } } }).learner.gradient_booster.model.trees[0]
  const keys = ['left_children', 'right_children', 'parents', 'split_indices', 'default_left']
  for (let k = 1 + Math.floor(next() * 3); k > 0; k--) {
    const key = keys[Math.floor(next() * keys.length)]
    if (next() < 0.1) tree[key].pop()
    else tree[key][Math.floor(next() * 7)] = INDEX_VALUES[Math.floor(next() * INDEX_VALUES.length)]
    json = json.replace(new RegExp(`"${key}":\\[[^\\]]*\\]`), `"${key}":[${tree[key].join(',')}]`)
  }
  return { format: 'xgboost-json', json }
}

const LOAD_ALL = `
import sys, numpy as np, xgboost as xgb
x = np.random.RandomState(0).rand(64, 2).astype(np.float32)
x[::7, 0] = np.nan
for path in sys.argv[1:]:
    print('loading', path, flush=True)
    try:
        b = xgb.Booster(); b.load_model(path); b.predict(xgb.DMatrix(x, missing=np.nan))
    except Exception as e:
        print('refused', path, str(e).splitlines()[0], flush=True)
print('done', flush=True)
`

describe('whatever the check accepts, real XGBoost loads', () => {
  it('400 random mutations of a tree and of a booster: each refused by the check, or loaded and predicted by XGBoost 1.7', async (ctx) => {
    if (skipWithout('xgboost', xgboostVersion() !== null, `${pythonForXgboost()} cannot import xgboost (apt-get install python3-xgboost)`))
      ctx.skip('python3 lacks xgboost')
    const next = random(35)
    const files = join(dir, 'mutations')
    mkdirSync(files)
    const accepted: string[] = []
    let refused = 0
    for (let i = 0; i < 400; i++) {
      const artifact = i % 2 === 0 ? mutatedTrees(next) : mutatedBooster(next)
      const parsed = ModelArtifactSchema.safeParse(artifact)
      if (!parsed.success) {
        refused++
        continue
      }
      const path = join(files, `mutation-${i}.json`)
      writeFileSync(path, xgboostJson(parsed.data as Extract<ModelArtifact, { format: 'gbdt-trees' | 'xgboost-json' }>))
      accepted.push(path)
    }
    // both sides are exercised: some mutations are harmless (a threshold, a default direction), most are not
    expect(accepted.length).toBeGreaterThan(20)
    expect(refused).toBeGreaterThan(100)
    const r = spawnSync(pythonForXgboost(), ['-c', LOAD_ALL, ...accepted], { encoding: 'utf8', timeout: 60_000 })
    const lastLoaded = r.stdout.trimEnd().split('\n').at(-1)
    expect(r.status, `XGBoost stopped (signal ${r.signal}) at: ${lastLoaded}`).toBe(0)
    expect(r.stdout.split('\n').filter((l) => l.startsWith('refused'))).toEqual([])
    expect(r.stdout).toMatch(/done\n$/)
  }, 120_000)
})
