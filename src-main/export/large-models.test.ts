// A sound but large models.json is read one model at a time (RunStore.withModels): export-models
// exports 100 models from a 21 MB file in a CLI whose heap (64 MB) the whole file parsed at once
// overflows, each file what the model alone gives; and what lies between the models, or outside
// the models list, is checked as the whole file's JSON.parse would have.
import { closeSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { KeptModel, TreeArtifact } from '@shared/contract'
import { MODELS_FILE, RunStore } from '../store/run-store'
import { killAll, spawnCli } from '../testing/cli-process'
import { fakeTreesRun, stumpTree } from '../testing/run-fixtures'
import { tempDir } from '../testing/service-harness'
import { modelFiles } from './models'

afterEach(() => killAll())

/** a full tree of `depth` levels in breadth-first order: splits on feature i mod 2, leaves ±1 */
function fullTree(depth: number): TreeArtifact {
  const n = 2 ** (depth + 1) - 1
  const split = (i: number) => i < 2 ** depth - 1
  return {
    feature: Array.from({ length: n }, (_, i) => (split(i) ? i % 2 : -1)),
    threshold: Array.from({ length: n }, (_, i) => (split(i) ? 0.5 : 0)),
    defaultLeft: Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 1 : 0)),
    left: Array.from({ length: n }, (_, i) => (split(i) ? 2 * i + 1 : -1)),
    leafValue: Array.from({ length: n }, (_, i) => (split(i) ? 0 : i % 2 === 0 ? 1 : -1)),
  }
}

const MODELS = 100
/** model i: 250 trees of depth 5, the first leaf value telling it apart (about 215 KB of text each) */
function model(i: number): KeptModel {
  const tree = fullTree(5)
  return {
    index: i,
    artifact: {
      format: 'gbdt-trees',
      features: 2,
      baseScore: 0.5,
      trees: [{ ...tree, leafValue: [i, ...tree.leafValue.slice(1)] }, ...new Array<TreeArtifact>(249).fill(tree)],
    },
  }
}

describe('a large models.json is read one model at a time', () => {
  it('export-models --all writes 100 models from a 21 MB models.json in a 64 MB heap, each the file its model alone gives', async () => {
    const dir = tempDir('large-models')
    const { run, kept } = fakeTreesRun(MODELS)
    const store = new RunStore(join(dir, 'runs'))
    await store.save(run)
    const path = join(store.runDir(run.runId), MODELS_FILE)
    const fd = openSync(path, 'w')
    try {
      writeSync(fd, `{"size":${kept.size},"strategy":"${kept.strategy}","workers":${kept.workers},"models":[`)
      for (let i = 0; i < MODELS; i++) writeSync(fd, `${i ? ',' : ''}${JSON.stringify(model(i))}`)
      writeSync(fd, ']}')
    } finally {
      closeSync(fd)
    }
    // parsed whole, its numbers alone take several times the text: past the heap below
    expect(readFileSync(path).length).toBeGreaterThan(20 * 2 ** 20)
    const out = join(dir, 'out')
    const cli = spawnCli('export-models', [run.runId, '--all', '--out', out, '--store', store.dir], [], { NODE_OPTIONS: '--max-old-space-size=64' })
    const exit = await cli.exited
    expect(exit, cli.out.stderr.slice(0, 2000)).toEqual({ code: 0, signal: null })
    expect(cli.out.stderr).toMatch(new RegExp(`wrote ${MODELS} models of run ${run.runId}`))
    const files = readdirSync(out).sort()
    expect(files).toHaveLength(MODELS)
    for (const i of [0, 1, MODELS - 1]) {
      const [expected] = modelFiles(run, { ...kept, models: [model(i)] }, 'all')
      expect(readFileSync(join(out, expected.fileName), 'utf8')).toBe(expected.content)
    }
  }, 120_000)

  it('what lies between the models or outside their list is checked as a parse of the whole file would: refused as not valid JSON', async () => {
    const dir = tempDir('models-gaps')
    const { run, kept } = fakeTreesRun(2)
    const store = new RunStore(join(dir, 'runs'))
    await store.save(run)
    const [a, b] = kept.models.map((m) => JSON.stringify(m))
    const head = `{"size":${kept.size},"strategy":"${kept.strategy}","workers":${kept.workers},"models":`
    const write = (text: string) => writeFileSync(join(store.runDir(run.runId), MODELS_FILE), text)

    write(`${head} [ ${a} ,\n ${b} ] }`)
    expect(await store.getModels(run.runId)).toEqual(kept)
    for (const [what, text] of [
      ['a missing comma', `${head}[${a} ${b}]}`],
      ['a trailing comma', `${head}[${a},${b},]}`],
      ['a stray word after the last model', `${head}[${a},${b} x]}`],
      ['the text cut off after the list', `${head}[${a},${b}]`],
      ['a model cut off', `${head}[${a},${b.slice(0, -3)}]}`],
    ]) {
      write(text)
      await expect(store.getModels(run.runId), what).rejects.toMatchObject({
        code: 'damaged',
        message: expect.stringMatching(/models\.json is not valid JSON/),
      })
      expect(() => JSON.parse(text), what).toThrow()
    }
    // valid JSON, but a number is not a model
    write(`${head}[${a},7,${b}]}`)
    await expect(store.getModels(run.runId)).rejects.toMatchObject({
      code: 'damaged',
      message: expect.stringMatching(/unexpected ",7," between models 0 and 1 in the models list/),
    })
    // a model that parses but is not one names its place, as the whole file's check did
    write(
      `${head}[${a},{"index":1,"artifact":{"format":"gbdt-trees","features":2,"baseScore":0.5,"trees":[${JSON.stringify({ ...stumpTree(), feature: [9, -1, -1] })}]}}]}`,
    )
    await expect(store.getModels(run.runId)).rejects.toMatchObject({
      message: expect.stringMatching(/\(models\.1\.artifact: .*split feature 9 is outside 0 to 1/),
    })
    write(`${head}[${a},${a}]}`)
    await expect(store.getModels(run.runId)).rejects.toMatchObject({ message: expect.stringMatching(/\(models: model 0 is kept twice/) })
  })
})
