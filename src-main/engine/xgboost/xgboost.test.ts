// The xgboost backend's rules that need no library: version-correct parameters, the device choice,
// threads per worker and OpenMP's wait policy, and how the config and the CLI refuse `batched` on it (with the reason).
import { describe, expect, it } from 'vitest'
import { BenchConfigSchema, presetConfig } from '@shared/contract'
import { GBDT_DEFAULTS } from '@shared/families/gbdt'
import { configFromFlags, UsageError } from '../../cli/options'
import { ompWaitPolicyForLoad } from './library'
import { nthreadFor, resolveDevice } from './xgboost-runtime'
import { xgbParams } from './xgboost-train'

const { kind: _kind, rounds: _rounds, ...params } = GBDT_DEFAULTS
const cpuBuild = { cuda: false, version: '1.7.4', path: '/usr/lib/x86_64-linux-gnu/libxgboost.so.0' }
const cudaBuild = { cuda: true, version: '2.1.4', path: '/venv/lib/python3.12/site-packages/xgboost/lib/libxgboost.so' }

describe('xgbParams', () => {
  const map = (device: Parameters<typeof xgbParams>[3], major: number) => Object.fromEntries(xgbParams(params, 43, 3, device, major))

  it('maps every family parameter to XGBoost names, with the model seed and nthread', () => {
    expect(map({ kind: 'cpu' }, 1)).toEqual({
      objective: 'reg:squarederror',
      tree_method: 'hist',
      grow_policy: 'depthwise',
      max_depth: '6',
      eta: '0.1',
      lambda: '1',
      alpha: '0',
      gamma: '0',
      min_child_weight: '1',
      max_bin: '256',
      subsample: '0.8',
      colsample_bytree: '0.8',
      base_score: '0.5',
      seed: '43',
      nthread: '3',
      verbosity: '0',
    })
  })

  it("a classifier is XGBoost's own objective: binary:logistic, or multi:softprob with num_class = K; base_score the family's; nothing else changes", () => {
    const regression = xgbParams(params, 43, 3, { kind: 'cpu' }, 1)
    const binary = xgbParams(params, 43, 3, { kind: 'cpu' }, 1, { objective: 'binary', classes: 2 })
    const multiclass = xgbParams(params, 43, 3, { kind: 'cpu' }, 1, { objective: 'multiclass', classes: 5 })
    expect(binary[0]).toEqual(['objective', 'binary:logistic'])
    expect(multiclass.slice(0, 2)).toEqual([
      ['objective', 'multi:softprob'],
      ['num_class', '5'],
    ])
    expect(Object.fromEntries(binary)).toMatchObject({ base_score: '0.5' })
    expect(binary.slice(1)).toEqual(regression.slice(1))
    expect(multiclass.slice(2)).toEqual(regression.slice(1))
    expect(xgbParams(params, 43, 3, { kind: 'cpu' }, 1, { objective: 'regression', classes: 0 })).toEqual(regression)
  })

  it('CUDA: gpu_hist (+ gpu_id) on 1.x, device=cuda with hist on 2.x', () => {
    expect(map({ kind: 'cuda', ordinal: null }, 1)).toMatchObject({ tree_method: 'gpu_hist', gpu_id: '0' })
    expect(map({ kind: 'cuda', ordinal: 1 }, 1)).toMatchObject({ tree_method: 'gpu_hist', gpu_id: '1' })
    expect(map({ kind: 'cuda', ordinal: null }, 2)).toMatchObject({ tree_method: 'hist', device: 'cuda' })
    expect(map({ kind: 'cuda', ordinal: 1 }, 3)).toMatchObject({ tree_method: 'hist', device: 'cuda:1' })
    expect(map({ kind: 'cuda', ordinal: null }, 2)).not.toHaveProperty('gpu_id')
    expect(map({ kind: 'cpu' }, 2)).toMatchObject({ tree_method: 'hist', device: 'cpu' })
  })
})

describe('resolveDevice (TRAINPOOL_XGBOOST_DEVICE)', () => {
  it('auto is cuda only for a CUDA build on a machine with an NVIDIA GPU', () => {
    expect(resolveDevice(undefined, cpuBuild, ['NVIDIA H100'])).toEqual({ kind: 'cpu' })
    expect(resolveDevice('auto', cudaBuild, [])).toEqual({ kind: 'cpu' })
    expect(resolveDevice('', cudaBuild, ['NVIDIA H100'])).toEqual({ kind: 'cuda', ordinal: null })
    expect(resolveDevice('cpu', cudaBuild, ['NVIDIA H100'])).toEqual({ kind: 'cpu' })
    expect(resolveDevice('cuda:1', cudaBuild, ['a', 'b'])).toEqual({ kind: 'cuda', ordinal: 1 })
  })

  it('cuda on a CPU build is an error that names the library and why', () => {
    expect(() => resolveDevice('cuda', cpuBuild, ['NVIDIA H100'])).toThrow(
      /libxgboost\.so\.0 \(XGBoost 1\.7\.4\) was built without CUDA.*USE_CUDA false.*pip install xgboost/,
    )
  })

  it('cuda without a GPU, a GPU number out of range, or an unknown device are errors too', () => {
    expect(() => resolveDevice('cuda', cudaBuild, [])).toThrow(/no NVIDIA GPU/)
    expect(() => resolveDevice('cuda:2', cudaBuild, ['a', 'b'])).toThrow(/2 NVIDIA GPU/)
    expect(() => resolveDevice('gpu', cudaBuild, ['a'])).toThrow(/accepted: auto, cpu, cuda, cuda:N/)
  })
})

describe('nthreadFor', () => {
  it('is ⌊cores ÷ W⌋, at least 1, W from the pool; TRAINPOOL_XGBOOST_NTHREAD overrides', () => {
    expect(nthreadFor({}, 16)).toEqual({ nthread: 16, rule: 'cores ÷ W = 16 ÷ 1' })
    expect(nthreadFor({ TRAINPOOL_POOL_WORKERS: '5' }, 16)).toEqual({ nthread: 3, rule: 'cores ÷ W = 16 ÷ 5' })
    expect(nthreadFor({ TRAINPOOL_POOL_WORKERS: '4' }, 2).nthread).toBe(1)
    expect(nthreadFor({ TRAINPOOL_POOL_WORKERS: '4', TRAINPOOL_XGBOOST_NTHREAD: '2' }, 2)).toEqual({ nthread: 2, rule: 'TRAINPOOL_XGBOOST_NTHREAD=2' })
    expect(() => nthreadFor({ TRAINPOOL_XGBOOST_NTHREAD: '0' }, 2)).toThrow(/an integer from 1 to 1024/)
  })
})

describe('the config and the CLI on xgboost', () => {
  it('batched is refused with the reason and a pointer to Trainpool’s own engine', () => {
    const r = BenchConfigSchema.safeParse(presetConfig('smoke', { model: { kind: 'gbdt' }, backend: 'xgboost' }))
    expect(r.success).toBe(false)
    const issue = r.error!.issues.find((i) => i.path[0] === 'strategies')!
    expect(issue.message).toMatch(/^batched is not available for a gradient-boosted trees on xgboost: XGBoost trains one booster at a time/)
    expect(issue.message).toMatch(/Trainpool's own engine \(--backend cpu\); accepted: sequential, pool$/)
    expect(
      BenchConfigSchema.safeParse(presetConfig('smoke', { model: { kind: 'gbdt' }, backend: 'xgboost', strategies: ['sequential', 'pool'] })).success,
    ).toBe(true)
  })

  it('xgboost trains only trees: the MLP refuses it', () => {
    const r = BenchConfigSchema.safeParse(presetConfig('smoke', { backend: 'xgboost', strategies: ['sequential'] }))
    expect(r.error?.issues.map((i) => i.message)).toContainEqual(expect.stringMatching(/backend xgboost cannot train a neural network/))
  })

  it('the CLI leaves batched out of the default strategies on xgboost, and refuses it when asked, with the reason', () => {
    const c = configFromFlags({ model: 'gbdt', preset: 'smoke', backend: 'xgboost' })
    expect(c.strategies).toEqual(['sequential', 'pool'])
    expect(configFromFlags({ model: 'gbdt', preset: 'smoke', backend: 'cpu' }).strategies).toContain('batched')
    expect(() => configFromFlags({ model: 'gbdt', preset: 'smoke', backend: 'xgboost', strategies: 'sequential,batched' })).toThrow(UsageError)
    expect(() => configFromFlags({ model: 'gbdt', preset: 'smoke', backend: 'xgboost', strategies: 'batched' })).toThrow(
      /--strategies: batched is not available .* on xgboost: XGBoost trains one booster at a time/,
    )
  })
})

describe('ompWaitPolicyForLoad', () => {
  it("loads XGBoost with PASSIVE when no policy is set, and keeps the user's own", () => {
    const unset: NodeJS.ProcessEnv = {}
    expect(ompWaitPolicyForLoad(unset)).toBe('PASSIVE')
    expect(unset.OMP_WAIT_POLICY).toBe('PASSIVE')
    expect(ompWaitPolicyForLoad({ OMP_WAIT_POLICY: '' })).toBe('PASSIVE')
    const active: NodeJS.ProcessEnv = { OMP_WAIT_POLICY: 'ACTIVE' }
    expect(ompWaitPolicyForLoad(active)).toBe('ACTIVE')
    expect(active.OMP_WAIT_POLICY).toBe('ACTIVE')
  })
})
