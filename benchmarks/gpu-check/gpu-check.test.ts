// benchmarks/gpu-check.sh can only really run on an NVIDIA machine; here we check what can be
// checked without one: the script parses, a CPU adapter (lavapipe here) is refused with exit 3,
// the PyTorch reference compiles, the combiner's arithmetic, and the whole pipeline end to end
// with --allow-cpu-adapter, a fake nvidia-smi and a fake python3 on PATH.
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { delimiter, join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gpuBusyByStrategy, type TelemetrySample } from '@shared/contract'
import { skipWithout } from '../../src-main/testing/capability'
// @ts-expect-error plain ESM script without types
import { combine, treesComparison } from './combine.mjs'

const root = resolve(__dirname, '../..')
const script = join(root, 'benchmarks/gpu-check.sh')
let tmp: string

beforeAll(() => {
  tmp = mkdtempSync(join(os.tmpdir(), 'trainpool-gpu-check-'))
})
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra }
  delete env.VK_DRIVER_FILES
  delete env.VK_ICD_FILENAMES
  delete env.TRAINPOOL_NVIDIA_SMI
  return env
}

function hasCommand(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0
}

describe('gpu-check.sh', () => {
  it('is valid bash (and shellcheck-clean where shellcheck exists)', () => {
    expect(spawnSync('bash', ['-n', script], { encoding: 'utf8' }).status).toBe(0)
    if (hasCommand('shellcheck')) {
      const r = spawnSync('shellcheck', ['-S', 'warning', script], { encoding: 'utf8' })
      expect(r.stdout + r.stderr).toBe('')
    }
  })

  it('--help prints the usage from the header', () => {
    const r = spawnSync('bash', [script, '--help'], { encoding: 'utf8' })
    expect(r.status).toBe(0)
    expect(r.stdout).toContain('--probe-only')
    expect(r.stdout).toContain('pack.sh gpu-pack')
  })

  it('bad usage exits 2', () => {
    const r = spawnSync('bash', [script, '--frobnicate'], { encoding: 'utf8' })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('unknown option --frobnicate')
  })

  it('--probe-only refuses a CPU adapter (llvmpipe/lavapipe/SwiftShader) as the GPU: exit 3', (ctx) => {
    const r = spawnSync('bash', [script, '--probe-only'], { encoding: 'utf8', env: cleanEnv(), timeout: 150_000 })
    if (skipWithout('webgpu', r.status !== 4, `no WebGPU adapter here: ${r.stderr.trim().split('\n').pop()}`)) return ctx.skip()
    if (r.status === 0) {
      // a machine with a real GPU adapter: it must not be a software one
      expect(r.stdout).not.toMatch(/llvmpipe|lavapipe|swiftshader|"architecture":"software"/i)
      return
    }
    expect(r.status, r.stderr).toBe(3)
    expect(r.stderr).toMatch(/REFUSED: the WebGPU adapter is a CPU \(software\) adapter, not the GPU: .*(llvmpipe|lavapipe|SwiftShader)/i)
    expect(r.stderr).toContain('VK_DRIVER_FILES')
    expect(r.stdout).toBe('')
  })

  it('the PyTorch reference compiles', (ctx) => {
    if (!hasCommand('python3')) return ctx.skip()
    const cfile = join(tmp, 'torch_reference.pyc')
    execFileSync('python3', ['-c', 'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)', join(__dirname, 'torch_reference.py'), cfile])
    expect(existsSync(cfile)).toBe(true)
    const help = spawnSync('python3', [join(__dirname, 'torch_reference.py'), '--help'], { encoding: 'utf8' })
    expect(help.status).toBe(0)
    expect(help.stdout).toContain('stack_module_state')
  })
})

const gpu = (util: number | null) => ({ index: 0, name: 'NVIDIA H200', util, memUsedMiB: 2048, memTotalMiB: 143771, tempC: 40, powerW: 100, powerLimitW: 700 })
const sample = (t: number, strategy: TelemetrySample['strategy'], util: number | null, phase: TelemetrySample['phase'] = 'measuring'): TelemetrySample => ({
  t, gpus: [gpu(util)], workers: [], index: 0, strategy, workerCount: 1, phase,
})

describe('combine.mjs', () => {
  it('puts adapter, nvidia-smi, trainpool (with GPU busy per strategy) and torch into one JSON with ratios', () => {
    const dir = join(tmp, 'combine')
    mkdirSync(dir)
    const samples = [sample(0, 'sequential', 20), sample(1000, 'sequential', 30), sample(2000, 'batched', 95, 'warming'), sample(3000, 'batched', 97), sample(4000, 'pool', null)]
    writeFileSync(join(dir, 'meta.json'), JSON.stringify({ startedAt: 'T0', softwareAdapter: false, vulkan: { VK_DRIVER_FILES: '/x/nvidia_icd.json' } }))
    writeFileSync(join(dir, 'adapter.json'), 'Warning: something\n{"found":true,"vendor":"nvidia","description":"NVIDIA H200"}\n')
    writeFileSync(join(dir, 'nvidia-smi-L.txt'), 'GPU 0: NVIDIA H200 (UUID: GPU-1)\n')
    writeFileSync(join(dir, 'trainpool.exit'), '0\n')
    writeFileSync(join(dir, 'trainpool.wall_s'), '95.5\n')
    const row = (strategy: string, workers: number, medianMs: number) => ({ size: 10000, models: 50, strategy, workers, medianMs, minMs: medianMs, maxMs: medianMs, speedupVsSequential: 1, gflops: 1, warnings: [] })
    writeFileSync(
      join(dir, 'trainpool.json'),
      JSON.stringify({
        runId: 'r', status: 'ok', error: null, environment: { backend: 'webgpu', device: 'NVIDIA H200' }, measurements: [],
        summary: [row('sequential', 1, 20000), row('pool', 1, 21000), row('pool', 2, 11000), row('batched', 1, 800), row('batched', 2, 1000)],
        verification: { sameWork: true, maxRelMseDiff: 1e-7, tolerance: 1e-4, problems: [] }, warnings: [],
        telemetry: { intervalMs: 1000, maxSamples: 1800, gpu: { state: 'ok', message: 'nvidia-smi: 1 GPU' }, samples },
      }),
    )
    writeFileSync(join(dir, 'torch.json'), JSON.stringify({ ok: true, loop: { medianMs: 10000 }, vmap: { medianMs: 400 }, speedupVmapVsLoop: 25 }))
    const out = combine(dir)
    expect(out.adapter).toEqual({ found: true, vendor: 'nvidia', description: 'NVIDIA H200', software: false })
    expect(out.nvidiaSmi.list).toEqual(['GPU 0: NVIDIA H200 (UUID: GPU-1)'])
    expect(out.trainpool).toMatchObject({ exitCode: 0, wallS: 95.5, ok: true, backend: 'webgpu', verification: { sameWork: true } })
    expect(out.trainpool.gpuBusy).toEqual(gpuBusyByStrategy(samples))
    expect(out.trainpool.gpuBusyLine).toBe('GPU busy 25 % in sequential, 97 % in batched')
    expect(out.trainpool.gpuTelemetry).toMatchObject({ samples: 5, peakMemUsedMiB: 2048 })
    expect(out.comparison).toMatchObject({
      trainpoolSequentialMs: 20000, trainpoolBestBatchedMs: 800, trainpoolBestBatchedWorkers: 1, trainpoolBestPoolWorkers: 2,
      trainpoolBatchedSpeedup: 25, torchVmapMs: 400, trainpoolBatchedVsTorchVmap: 2, trainpoolSequentialVsTorchLoop: 2,
    })
  })

  it('says why parts are missing', () => {
    const dir = join(tmp, 'combine-missing')
    mkdirSync(dir)
    writeFileSync(join(dir, 'trainpool.exit'), '124\n')
    writeFileSync(join(dir, 'trainpool.log'), 'line 1\nworker died\n')
    writeFileSync(join(dir, 'torch.skipped'), 'python3 not found\n')
    writeFileSync(join(dir, 'xgboost.skipped'), 'no CUDA-enabled libxgboost here: … was built without CUDA\n')
    const out = combine(dir)
    expect(out.trainpool).toMatchObject({ exitCode: 124, ok: false, error: 'no result JSON', logTail: 'line 1\nworker died' })
    expect(out.torch).toEqual({ skipped: 'python3 not found' })
    expect(out.xgboost).toEqual({ skipped: 'no CUDA-enabled libxgboost here: … was built without CUDA' })
    expect(out.nvidiaSmi).toBeNull()
  })

  it('the XGBoost (CUDA) run with its per-model times', () => {
    const dir = join(tmp, 'combine-xgboost')
    mkdirSync(dir)
    writeFileSync(join(dir, 'xgboost.exit'), '0\n')
    const m = (strategy: string, workers: number, trainMs: number[]) => ({ size: 10000, models: 3, strategy, workers, perModel: trainMs.map((t, index) => ({ index, trainMs: t })) })
    writeFileSync(
      join(dir, 'xgboost.json'),
      JSON.stringify({
        runId: 'x', status: 'ok', config: { model: { kind: 'gbdt', rounds: 100 } }, environment: { backend: 'xgboost', device: 'NVIDIA H200 (CUDA)', backendFlags: { xgboostDevice: 'cuda' } },
        measurements: [m('sequential', 1, [300, 100, 200]), m('pool', 5, [400, 500, 450])], summary: [], verification: { sameWork: true, maxRelMseDiff: 0, tolerance: 0, problems: [] },
      }),
    )
    expect(combine(dir).xgboost).toMatchObject({
      exitCode: 0, ok: true, backend: 'xgboost', backendFlags: { xgboostDevice: 'cuda' }, model: { rounds: 100 },
      perModel: [{ size: 10000, strategy: 'sequential', workers: 1, models: 3, medianTrainMs: 200 }, { size: 10000, strategy: 'pool', workers: 5, models: 3, medianTrainMs: 450 }],
    })
  })
})

describe('combine.mjs: trees on the GPU (issue 13)', () => {
  const row = (strategy: string, workers: number, medianMs: number, size = 10000) => ({ size, models: 50, strategy, workers, medianMs, minMs: medianMs, maxMs: medianMs })
  const trees = { ok: true, summary: [row('sequential', 1, 120_000), row('batched', 1, 4000)] }

  it('batched on webgpu against XGBoost CUDA in a pool of 5 when that ran', () => {
    const xgboost = { ok: true, device: 'NVIDIA H200 (CUDA)', summary: [row('sequential', 1, 300_000), row('pool', 5, 60_000), row('pool', 5, 90_000, 50000)] }
    const c = treesComparison(trees, xgboost, false)
    expect(c).toMatchObject({ size: 10000, models: 50, webgpuBatchedMs: 4000, webgpuSequentialMs: 120_000, xgboostPoolMs: 60_000, xgboostPoolWorkers: 5, batchedVsXgboostPool: 15, batchedVsSequential: 30, speedup: 15, target: 10, met: true })
    expect(c.note).toBe('50 GBDT models × 10000 rows: batched on WebGPU 15.0× faster than XGBoost (NVIDIA H200 (CUDA)) in a pool of 5; target ≥ 10× met; vs WebGPU sequential 30.0×')
  })

  it('without XGBoost CUDA: against WebGPU sequential, saying why; a software adapter is flagged', () => {
    const c = treesComparison({ ok: true, summary: [row('sequential', 1, 20_000), row('batched', 1, 5000)] }, { skipped: 'no CUDA-enabled libxgboost here: built without CUDA' }, true)
    expect(c).toMatchObject({ batchedVsXgboostPool: null, against: 'WebGPU sequential', speedup: 4, met: false })
    expect(c.note).toBe(
      '50 GBDT models × 10000 rows: batched on WebGPU 4.0× faster than WebGPU sequential (XGBoost CUDA not run: no CUDA-enabled libxgboost here: built without CUDA); target ≥ 10× NOT met — on a CPU (software) adapter: NOT GPU numbers',
    )
    expect(treesComparison({ ok: false, summary: [] }, null, false)).toBeNull()
  })

  it('the trees run and its comparison land in the one JSON; --skip-trees says so', () => {
    const dir = join(tmp, 'combine-trees')
    mkdirSync(dir)
    writeFileSync(join(dir, 'trees.exit'), '0\n')
    writeFileSync(
      join(dir, 'trees.json'),
      JSON.stringify({ runId: 't', status: 'ok', config: { model: { kind: 'gbdt', rounds: 100, maxDepth: 6 } }, environment: { backend: 'webgpu', device: 'NVIDIA H200' }, measurements: [], summary: trees.summary, verification: { sameWork: true, maxRelMseDiff: 0, tolerance: 0, problems: [] } }),
    )
    writeFileSync(join(dir, 'xgboost.skipped'), 'no CUDA-enabled libxgboost here: none found\n')
    const out = combine(dir)
    expect(out.trees).toMatchObject({ ok: true, backend: 'webgpu', model: { rounds: 100, maxDepth: 6 }, verification: { sameWork: true } })
    expect(out.treesComparison).toMatchObject({ against: 'WebGPU sequential', speedup: 30, met: true })
    const skipped = join(tmp, 'combine-trees-skipped')
    mkdirSync(skipped)
    writeFileSync(join(skipped, 'trees.skipped'), '--skip-trees\n')
    expect(combine(skipped)).toMatchObject({ trees: { skipped: '--skip-trees' }, treesComparison: null })
  })
})

describe('gpu-check.sh end to end (CPU adapter allowed, fake nvidia-smi and python3)', () => {
  it('writes one JSON with the adapter, nvidia-smi, the trainpool run with GPU telemetry, torch, and the trees on webgpu', { timeout: 420_000 }, (ctx) => {
    if (!existsSync(join(root, 'out/main/cli.js'))) {
      if (skipWithout('build', false, 'out/main/cli.js is missing: run `npm run build`')) return ctx.skip()
    }
    const bin = join(tmp, 'bin')
    mkdirSync(bin)
    writeFileSync(
      join(bin, 'nvidia-smi'),
      '#!/bin/sh\ncase "$1" in\n  -L) echo "GPU 0: Fake GPU (UUID: GPU-fake)"; exit 0 ;;\n  --query-gpu=index,name,driver_version*) echo "0, Fake GPU, 999.1, 1000 MiB, 100 W, 2000 MHz"; exit 0 ;;\nesac\nwhile true; do echo "0, Fake GPU, 42, 100, 1000, 40, 50.0, 100.0"; sleep 0.2; done\n',
    )
    writeFileSync(
      join(bin, 'python3'),
      '#!/bin/sh\ncase "$1" in -c) exit 0 ;; esac\necho \'{"ok":true,"torch":"fake","loop":{"medianMs":4000,"minMs":4000,"maxMs":4000,"runsMs":[4000]},"vmap":{"medianMs":200,"minMs":200,"maxMs":200,"runsMs":[200]},"speedupVmapVsLoop":20}\'\n',
    )
    chmodSync(join(bin, 'nvidia-smi'), 0o755)
    chmodSync(join(bin, 'python3'), 0o755)
    const outFile = join(tmp, 'check.json')
    const r = spawnSync(
      'bash',
      [
        script, '--allow-cpu-adapter', '--sizes', '2000', '--models', '4', '--workers', '2', '--repeats', '1', '--epochs', '1',
        '--trees-sizes', '2000', '--trees-models', '2', '--trees-rounds', '2', '--out', outFile,
      ],
      { encoding: 'utf8', env: cleanEnv({ PATH: `${bin}${delimiter}${process.env.PATH}` }), timeout: 400_000, cwd: tmp },
    )
    if (skipWithout('webgpu', r.status !== 4, `no WebGPU adapter here: ${r.stderr.trim().split('\n').pop()}`)) return ctx.skip()
    expect(r.status, r.stderr).toBe(0)
    const out = JSON.parse(readFileSync(outFile, 'utf8'))
    expect(JSON.parse(r.stdout)).toEqual(out)
    expect(out.options).toMatchObject({ allowCpuAdapter: true })
    expect(out.nvidiaSmi.list).toEqual(['GPU 0: Fake GPU (UUID: GPU-fake)'])
    expect(out.trainpool).toMatchObject({ exitCode: 0, ok: true, backend: 'webgpu', verification: { sameWork: true } })
    expect(out.trainpool.summary.map((s: { strategy: string }) => s.strategy)).toEqual(['sequential', 'pool', 'batched'])
    expect(out.trainpool.gpuTelemetry.gpu.state).toBe('ok')
    expect(out.trainpool.gpuBusy.every((b: { meanUtil: number }) => b.meanUtil === 42)).toBe(true)
    expect(out.torch).toMatchObject({ ok: true, torch: 'fake' })
    expect(out.comparison.torchVmapMs).toBe(200)
    expect(out.comparison.trainpoolBatchedVsTorchVmap).toBeGreaterThan(0)
    // no CUDA-enabled libxgboost on a machine without a GPU: said, not run
    expect(out.xgboost.skipped).toMatch(/^no CUDA-enabled libxgboost here: /)
    // trees on webgpu: batched and sequential, the same trees, compared with sequential (no XGBoost CUDA here)
    expect(out.options.trees).toMatchObject({ skip: false, sizes: '2000', models: '2', rounds: 2 })
    expect(out.trees).toMatchObject({ exitCode: 0, ok: true, backend: 'webgpu', model: { kind: 'gbdt', rounds: 2 }, verification: { sameWork: true, tolerance: 0 } })
    expect(out.trees.summary.map((s: { strategy: string }) => s.strategy)).toEqual(['sequential', 'batched'])
    expect(out.treesComparison).toMatchObject({ size: 2000, models: 2, against: 'WebGPU sequential', target: 10 })
    expect(out.treesComparison.speedup).toBeGreaterThan(0)
    expect(r.stderr).toContain('gpu-check: trees: 2 GBDT models × 2000 rows: batched on WebGPU')
    if (out.adapter.software) expect(out.adapter.description).toMatch(/llvmpipe|lavapipe|swiftshader/i)
  })
})
