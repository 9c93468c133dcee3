import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { configFromFlags, FLAG_HELP, UsageError } from './options'

function usage(flags: Parameters<typeof configFromFlags>[0]): string {
  try {
    configFromFlags(flags)
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError)
    return (err as Error).message
  }
  throw new Error(`expected ${JSON.stringify(flags)} to be refused`)
}

describe('bench flags', () => {
  it('applies a preset, then explicit flags', () => {
    const c = configFromFlags({ preset: 'smoke', backend: 'wasm', models: '6', workers: '1,3' })
    expect(c).toMatchObject({ preset: 'smoke', sizes: [2000], models: [6], workers: [1, 3], model: { kind: 'mlp', epochs: 1 }, repeats: 1, backend: 'wasm' })
    expect(configFromFlags({ preset: 'article' })).toMatchObject({ sizes: [10000, 50000, 100000, 200000], models: [50], workers: [5] })
  })

  it.each([
    [{ models: '0' }, /^--models must be an integer from 1 to 1000 \(got 0\)$/],
    [{ models: '-3' }, /--models/],
    [{ models: 'abc' }, /^--models "abc": "abc" is not a number; accepted: comma-separated integers from 1 to 1000$/],
    [{ sizes: '0' }, /--sizes.*2 to 2000000/],
    [{ sizes: '1.5' }, /--sizes "1.5".*not an integer/],
    [{ sizes: '2' }, /^--sizes 2 leaves 2 training and 0 test rows.*at least one of each/],
    [{ sizes: '10', testSplit: '0.01' }, /--test-split.*0.05 to 0.5/],
    [{ workers: '0' }, /--workers/],
    [{ preset: 'smoke', workers: '5' }, /^--workers 5 is more than models 4/],
    [{ strategies: 'sequential,turbo' }, /--strategies.*sequential, pool, batched/],
    [{ strategies: 'pool,pool' }, /--strategies.*twice/],
    [{ backend: 'cuda' }, /--backend.*auto, tensorflow, webgpu, onnxruntime, wasm, cpu/],
    [{ epochs: '0' }, /--epochs.*1 to 1000/],
    [{ epochs: '2.5' }, /--epochs "2.5" is not an integer/],
    [{ epochs: '9007199254740993' }, /^--epochs "9007199254740993" is too large to be exact/],
    [{ batchSize: '0' }, /--batch-size.*1 to 65536/],
    [{ hidden: '64,0' }, /--hidden.*1 to 4096/],
    [{ lr: 'NaN' }, /--lr "NaN" is not a number/],
    [{ lr: '0' }, /--lr.*from 0.000001 to 1|--lr.*1e-6/],
    [{ lr: 'Infinity' }, /--lr/],
    [{ repeats: '0' }, /--repeats.*1 to 100/],
    [{ seed: '-1' }, /--seed.*0 to 2000000000/],
    [{ target: 'random' }, /--target.*teacher, noise/],
    [{ preset: 'huge' }, /--preset "huge".*smoke, quick, article/],
  ])('refuses %j with a message naming the flag and the accepted range', (flags, pattern) => {
    expect(usage(flags)).toMatch(pattern)
  })
})

describe('bench --help on --backend', () => {
  it('says auto is picked by calibration, the table order being only TRAINPOOL_AUTO=order', () => {
    expect(FLAG_HELP.backend).toMatch(/auto: the backend a short calibration found fastest on this machine for the model family, among mlp [a-z]+, /)
    expect(FLAG_HELP.backend).toMatch(/gbdt cpu/)
    expect(FLAG_HELP.backend).toMatch(/TRAINPOOL_AUTO=order takes the first available in that order/)
    expect(FLAG_HELP.backend).not.toMatch(/auto, per model family/)
  })
})

describe('bench flags for trees (--model gbdt)', () => {
  it("applies the family's preset and defaults: the article's trees", () => {
    expect(configFromFlags({ model: 'gbdt', preset: 'smoke' })).toMatchObject({
      preset: 'smoke',
      sizes: [2000],
      models: [4],
      model: { kind: 'gbdt', rounds: 10, maxDepth: 6 },
    })
    expect(configFromFlags({ model: 'gbdt', preset: 'article' })).toMatchObject({
      sizes: [10000, 50000, 100000, 200000],
      models: [50],
      workers: [5],
      model: {
        kind: 'gbdt',
        rounds: 100,
        maxDepth: 6,
        eta: 0.1,
        lambda: 1,
        alpha: 0,
        gamma: 0,
        minChildWeight: 1,
        maxBin: 256,
        subsample: 0.8,
        colsampleBytree: 0.8,
        baseScore: 0.5,
      },
    })
    const c = configFromFlags({
      model: 'gbdt',
      rounds: '20',
      maxDepth: '4',
      eta: '0.3',
      lambda: '2',
      alpha: '0.5',
      gamma: '0.1',
      minChildWeight: '3',
      maxBin: '64',
      subsample: '1',
      colsample: '1',
      baseScore: '0',
    })
    expect(c.model).toEqual({
      kind: 'gbdt',
      rounds: 20,
      maxDepth: 4,
      eta: 0.3,
      lambda: 2,
      alpha: 0.5,
      gamma: 0.1,
      minChildWeight: 3,
      maxBin: 64,
      subsample: 1,
      colsampleBytree: 1,
      baseScore: 0,
    })
    expect(c.preset).toBe('custom')
  })

  it.each([
    [{ maxDepth: '0' }, /^--max-depth must be an integer from 1 to 16 \(got 0\)$/],
    [{ maxDepth: '17' }, /--max-depth.*1 to 16/],
    [{ eta: '0' }, /^--eta must be above 0 and at most 1/],
    [{ eta: '1.5' }, /--eta.*above 0 and at most 1/],
    [{ subsample: '0' }, /--subsample.*above 0 and at most 1/],
    [{ subsample: '1.01' }, /--subsample.*above 0 and at most 1/],
    [{ colsample: '0' }, /--colsample.*above 0 and at most 1/],
    [{ maxBin: '1' }, /--max-bin.*2 to 256/],
    [{ maxBin: '257' }, /--max-bin.*2 to 256/],
    [{ rounds: '0' }, /--rounds.*1 to 10000/],
    [{ lambda: '-1' }, /--lambda.*from 0/],
    [{ epochs: '3' }, /--epochs is a neural network \(MLP\) parameter; it does not apply to --model gbdt/],
    [{ hidden: '64' }, /--hidden is a neural network \(MLP\) parameter/],
    [{ model: 'forest' }, /--model "forest" is not a model family; accepted: mlp, gbdt/],
  ])('refuses %j naming the flag and the accepted range', (flags, pattern) => {
    expect(usage({ model: 'gbdt', ...flags })).toMatch(pattern)
  })

  it('refuses a tree flag for the MLP', () => {
    expect(usage({ rounds: '10' })).toMatch(/--rounds is a gradient-boosted trees parameter; it does not apply to --model mlp/)
  })
})

describe('trainpool bench process', () => {
  const cli = resolve(__dirname, 'index.ts')
  it('exits 2 on --models 0 with a message naming --models, starting nothing', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', cli, 'bench', '--preset', 'smoke', '--models', '0', '--no-save'], {
      encoding: 'utf8',
      timeout: 60_000,
    })
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/--models/)
    expect(r.stdout).toBe('')
  })

  it('exits 2 on an unknown flag and on an unavailable backend', () => {
    const unknown = spawnSync(process.execPath, ['--import', 'tsx', cli, 'bench', '--modles', '4'], { encoding: 'utf8', timeout: 60_000 })
    expect(unknown.status).toBe(2)
    expect(unknown.stderr).toMatch(/unknown option '--modles'/)
    const tensorflow = spawnSync(process.execPath, ['--import', 'tsx', cli, 'bench', '--preset', 'smoke', '--backend', 'tensorflow', '--no-save'], {
      encoding: 'utf8',
      timeout: 60_000,
    })
    // tfjs-node-gpu is optional: when it is installed and loads, this machine has it
    if (tensorflow.status !== 0) {
      expect(tensorflow.status).toBe(2)
      expect(tensorflow.stderr).toMatch(/trainpool bench: --backend tensorflow is not available here: .+/)
    }
  })
})

describe('model-set flags', () => {
  it("several values of a field make a grid; --seeds and --folds; N is the set's", () => {
    const c = configFromFlags({ model: 'gbdt', preset: 'smoke', eta: '0.1,0.3', maxDepth: '3,5', seeds: '2' })
    expect(c.set).toEqual({ grid: { eta: [0.1, 0.3], maxDepth: [3, 5] }, seeds: 2, folds: null })
    expect(c.models).toEqual([8])
    expect(configFromFlags({ model: 'gbdt', preset: 'smoke', folds: '3' })).toMatchObject({ set: { grid: {}, seeds: 1, folds: 3 }, models: [3] })
    const mlp = configFromFlags({ preset: 'smoke', hidden: '32/64,32', lr: '0.003,0.03' })
    expect(mlp.set?.grid).toEqual({ hidden: [[32], [64, 32]], lr: [0.003, 0.03] })
    expect(mlp.models).toEqual([4])
    // one value of each field is today's run: no set
    expect(configFromFlags({ model: 'gbdt', preset: 'smoke', eta: '0.3' }).set).toBeUndefined()
  })

  it.each([
    [
      { model: 'gbdt', baseScore: '0.1,0.5' },
      /^--base-score takes one value: it cannot vary in a grid; the gradient-boosted trees's fields that can: --rounds --max-depth --eta/,
    ],
    [{ model: 'gbdt', eta: '0.1,0.1' }, /^--eta lists 0.1 twice/],
    [{ model: 'gbdt', eta: '0.1,x' }, /^--eta "x" is not a number/],
    [{ model: 'gbdt', eta: '0.1,0' }, /^--eta must be above 0 and at most 1/],
    [{ model: 'gbdt', seeds: '0' }, /^--seeds must be an integer from 1 to 100/],
    [{ model: 'gbdt', folds: '1' }, /^--folds must be an integer from 2 to 10/],
    [{ model: 'gbdt', folds: '11' }, /^--folds must be an integer from 2 to 10/],
    [{ model: 'gbdt', eta: '0.1,0.2', models: '3' }, /^--models must be 2 for this model set \(2 configurations × 1 seed\), got 3$/],
    [{ model: 'gbdt', eta: '0.1,0.2', models: '8', sweep: 'models' }, /^--sweep models does not combine with a model set/],
    [{ model: 'gbdt', seeds: '100', folds: '10', eta: '0.1,0.2' }, /^--seeds\/--folds: the model set makes 2000 models/],
    [{ model: 'gbdt', folds: '10', sizes: '12', testSplit: '0.5' }, /^--folds 10 is more than the 6 training rows of size 12/],
  ])('refuses %j naming the flag', (flags, message) => {
    expect(usage(flags)).toMatch(message)
  })
})

describe('numbers in flags: decimal only, an integer written as one (the shared rule, vocabulary/fields.ts readNumber)', () => {
  it.each([
    [{ model: 'gbdt', maxDepth: '0x3' }, /^--max-depth "0x3" is not a decimal number; accepted: an integer from 1 to 16$/],
    [{ model: 'gbdt', seeds: '0x2' }, /^--seeds "0x2" is not a decimal number; accepted: an integer from 1 to 100$/],
    [{ model: 'gbdt', folds: '0x3' }, /^--folds "0x3" is not a decimal number; accepted: an integer from 2 to 10$/],
    [{ model: 'gbdt', lambda: '0x10' }, /^--lambda "0x10" is not a decimal number; accepted: a number from 0 to /],
    [{ model: 'gbdt', eta: '0.1,0x1' }, /^--eta "0x1" is not a decimal number/],
    [{ model: 'gbdt', maxDepth: '1e1' }, /^--max-depth "1e1" is not written as an integer; accepted: an integer from 1 to 16$/],
    [{ model: 'gbdt', seeds: '2.0' }, /^--seeds "2.0" is not written as an integer; accepted: an integer from 1 to 100$/],
    [{ sizes: '0b101' }, /^--sizes "0b101": "0b101" is not a decimal number/],
    [{ models: '4,0o7' }, /^--models "4,0o7": "0o7" is not a decimal number/],
    [{ repeats: '1e0' }, /^--repeats "1e0" is not written as an integer/],
    [{ lr: '0x1' }, /^--lr "0x1" is not a decimal number/],
    [{ testSplit: 'Infinity' }, /^--test-split "Infinity" is not a number/],
    [{ seed: ' ' }, /^--seed " " is empty/],
  ])('refuses %j, saying what the number is not and what is accepted', (flags, message) => {
    expect(usage(flags)).toMatch(message)
  })

  it('takes decimals as they are usually written: an exponent or a leading point in a real, a sign, digits grouped by _', () => {
    expect(configFromFlags({ preset: 'smoke', lr: '1e-3', testSplit: '.25', seed: '+7', sizes: '10_000' })).toMatchObject({
      model: { lr: 0.001 },
      testSplit: 0.25,
      seed: 7,
      sizes: [10000],
    })
    expect(configFromFlags({ model: 'gbdt', preset: 'smoke', lambda: '2.5e1', maxDepth: '4' }).model).toMatchObject({ lambda: 25, maxDepth: 4 })
  })

  it('refuses an empty item of a list by its place, never dropping it', () => {
    expect(usage({ sizes: '1000,,2000' })).toBe('--sizes "1000,,2000": value 2 is empty; accepted: comma-separated integers from 2 to 2000000')
    expect(usage({ model: 'gbdt', eta: '0.1,,0.3' })).toBe(
      '--eta "0.1,,0.3": value 2 is empty; accepted: a number above 0 and at most 1, or several separated by commas',
    )
    expect(usage({ hidden: '32//64' })).toMatch(/^--hidden "32\/\/64": value 2 is empty; accepted: .*, or several separated by \//)
  })

  it('says a wrong --seeds or --folds once, not again as a model or worker count', () => {
    expect(usage({ model: 'gbdt', preset: 'smoke', seeds: '0', workers: '2' })).toBe('--seeds must be an integer from 1 to 100 (got 0)')
    expect(usage({ model: 'gbdt', preset: 'smoke', folds: '1', workers: '2' })).toBe('--folds must be an integer from 2 to 10 (got 1)')
    expect(usage({ model: 'gbdt', preset: 'smoke', folds: '0', eta: '0.1,0.3' })).toBe('--folds must be an integer from 2 to 10 (got 0)')
  })

  it('a repeated grid value says what is accepted', () => {
    expect(usage({ model: 'gbdt', eta: '0.1,0.1' })).toMatch(/^--eta lists 0.1 twice; accepted: different values, each once \(up to 16\)/)
  })
})

describe('launcher flags (--launcher slurm)', () => {
  it('map to config.launcher, sbatch values as given', () => {
    const c = configFromFlags({
      preset: 'smoke',
      launcher: 'slurm',
      partition: 'gpu',
      gres: 'none',
      time: '1:00:00',
      account: 'lab',
      sbatchArgs: '--qos=short  --constraint=a100',
      queueTimeout: '60',
    })
    expect(c.launcher).toEqual({
      engine: 'slurm',
      partition: 'gpu',
      gres: null,
      time: '1:00:00',
      account: 'lab',
      sbatchArgs: ['--qos=short', '--constraint=a100'],
      queueTimeoutS: 60,
    })
    expect(configFromFlags({ preset: 'smoke', launcher: 'local' }).launcher).toBeUndefined()
  })

  it('refuse a Slurm flag without --launcher slurm, an unknown launcher, and a bad value by its flag', () => {
    expect(() => configFromFlags({ preset: 'smoke', partition: 'gpu' })).toThrow(/--partition applies to Slurm workers only: add --launcher slurm/)
    expect(() => configFromFlags({ preset: 'smoke', launcher: 'ray' })).toThrow(/--launcher "ray" is not a launcher; accepted: local .*, slurm/)
    expect(() => configFromFlags({ preset: 'smoke', launcher: 'slurm', time: 'soon' })).toThrow(/--time accepts a Slurm time limit/)
    expect(() => configFromFlags({ preset: 'smoke', launcher: 'slurm', sbatchArgs: '--array=1' })).toThrow(
      /--sbatch-args: .*--array is set by Trainpool itself/,
    )
  })
})
