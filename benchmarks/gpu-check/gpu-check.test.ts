// benchmarks/gpu-check.sh can only really run on an NVIDIA machine; here we check what can be
// checked without one: the script parses, a CPU adapter (lavapipe here) is refused with exit 3,
// the PyTorch reference compiles, the combiner's arithmetic and targets, and the pipeline end to
// end with --allow-cpu-adapter --quick, a fake nvidia-smi and a fake python3 on PATH.
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { delimiter, join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gpuBusyByStrategy, type TelemetrySample } from '@shared/contract'
import { skipWithout } from '../../src-main/testing/capability'
// @ts-expect-error plain ESM script without types
import { combine, targets } from './combine.mjs'

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
    execFileSync('python3', [
      '-c',
      'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)',
      join(__dirname, 'torch_reference.py'),
      cfile,
    ])
    expect(existsSync(cfile)).toBe(true)
    const help = spawnSync('python3', [join(__dirname, 'torch_reference.py'), '--help'], { encoding: 'utf8' })
    expect(help.status).toBe(0)
    expect(help.stdout).toContain('stack_module_state')
  })
})

const gpu = (util: number | null) => ({ index: 0, name: 'NVIDIA H200', util, memUsedMiB: 2048, memTotalMiB: 143771, tempC: 40, powerW: 100, powerLimitW: 700 })
const sample = (t: number, strategy: TelemetrySample['strategy'], util: number | null, phase: TelemetrySample['phase'] = 'measuring'): TelemetrySample => ({
  t,
  gpus: [gpu(util)],
  workers: [],
  index: 0,
  strategy,
  workerCount: 1,
  phase,
})

describe('combine.mjs', () => {
  const row = (strategy: string, workers: number, medianMs: number, extra: object = {}) => ({
    size: 10000,
    models: 50,
    strategy,
    workers,
    medianMs,
    minMs: medianMs,
    maxMs: medianMs,
    speedupVsSequential: 1,
    warnings: [],
    ...extra,
  })
  const counters = (readbacks: number) => ({ dispatches: 200, submits: 30, readbacks, bytesReadBack: readbacks * 200, hostMsBetweenSubmits: 1.5 })
  const run = (summary: object[], extra: object = {}) => ({
    runId: 'r',
    status: 'ok',
    error: null,
    config: { model: { kind: 'mlp', epochs: 3 } },
    environment: { backend: 'webgpu', device: 'NVIDIA H200' },
    measurements: [
      { size: 10000, models: 50, strategy: 'batched', workers: 1, device: counters(4) },
      { size: 10000, models: 50, strategy: 'sequential', workers: 1, device: counters(200) },
    ],
    summary,
    verification: { sameWork: true, maxRelMseDiff: 1e-7, tolerance: 1e-4, problems: [] },
    warnings: [],
    ...extra,
  })

  it('puts the adapter, nvidia-smi and every part into one JSON: device counters per row, GPU busy per strategy, the targets checked', () => {
    const dir = join(tmp, 'combine')
    mkdirSync(dir)
    const samples = [
      sample(0, 'sequential', 20),
      sample(1000, 'sequential', 30),
      sample(2000, 'batched', 95, 'warming'),
      sample(3000, 'batched', 97),
      sample(4000, 'pool', null),
    ]
    writeFileSync(join(dir, 'meta.json'), JSON.stringify({ startedAt: 'T0', softwareAdapter: false, vulkan: { VK_DRIVER_FILES: '/x/nvidia_icd.json' } }))
    writeFileSync(join(dir, 'adapter.json'), 'Warning: something\n{"found":true,"vendor":"nvidia","description":"NVIDIA H200"}\n')
    writeFileSync(join(dir, 'nvidia-smi-L.txt'), 'GPU 0: NVIDIA H200 (UUID: GPU-1)\n')
    writeFileSync(join(dir, 'part-mlp-10k.exit'), '0\n')
    writeFileSync(join(dir, 'part-mlp-10k.wall_s'), '95.5\n')
    writeFileSync(join(dir, 'part-mlp-10k.json'), JSON.stringify(run([row('sequential', 1, 2000), row('batched', 1, 40)], { telemetry: { samples } })))
    writeFileSync(join(dir, 'part-torch-10k.exit'), '0\n')
    writeFileSync(join(dir, 'part-torch-10k.json'), JSON.stringify({ ok: true, loop: { medianMs: 2880 }, vmap: { medianMs: 173 }, speedupVmapVsLoop: 16.6 }))
    writeFileSync(join(dir, 'part-cpu-scaling.exit'), '0\n')
    writeFileSync(join(dir, 'part-cpu-scaling.json'), JSON.stringify({ ...run([row('pool', 1, 1600), row('pool', 16, 125)]), measurements: [] }))
    writeFileSync(join(dir, 'part-trees-200k.skipped'), 'the budget had 10 s left\n')
    const out = combine(dir)
    expect(out.adapter).toEqual({ found: true, vendor: 'nvidia', description: 'NVIDIA H200', software: false })
    expect(out.nvidiaSmi.list).toEqual(['GPU 0: NVIDIA H200 (UUID: GPU-1)'])
    const mlp = out.parts['mlp-10k']
    expect(mlp).toMatchObject({ exitCode: 0, wallS: 95.5, ok: true, backend: 'webgpu', verification: { sameWork: true } })
    expect(mlp.gpuBusy).toEqual(gpuBusyByStrategy(samples).map(({ strategy, meanUtil, samples }) => ({ strategy, meanUtil, samples })))
    // batched W=1: 4 readbacks = 3 epochs + the test MSE; sequential: 50 programs of 4
    expect(mlp.summary.find((s: { strategy: string }) => s.strategy === 'batched')).toMatchObject({ device: counters(4), readbacksPerEpoch: 1 })
    expect(mlp.summary.find((s: { strategy: string }) => s.strategy === 'sequential').readbacksPerEpoch).toBe(1)
    expect(out.parts['torch-10k']).toMatchObject({ ok: true, vmap: { medianMs: 173 } })
    expect(out.parts['trees-200k']).toEqual({ skipped: 'the budget had 10 s left' })
    const target = (what: string) => out.targets.find((t: { what: string }) => t.what.startsWith(what))
    expect(target('MLP batched, 50 models × 10 000')).toMatchObject({ value: 40, met: true })
    expect(target('MLP batched, 50 models × 10 000').text).toContain('PyTorch vmap 173.0 ms')
    expect(target('MLP sequential')).toMatchObject({ value: 2000, met: true })
    expect(target('CPU pool')).toMatchObject({ value: 12.8, met: true })
    expect(target('MLP readbacks per epoch')).toMatchObject({ value: 1, met: true })
    expect(target('trees batched, 50 models × 200 000')).toMatchObject({ value: null, met: null })
  })

  it('says why parts are missing', () => {
    const dir = join(tmp, 'combine-missing')
    mkdirSync(dir)
    writeFileSync(join(dir, 'part-mlp-10k.exit'), '124\n')
    writeFileSync(join(dir, 'part-mlp-10k.log'), 'line 1\nworker died\n')
    writeFileSync(join(dir, 'torch.skipped'), 'python3 not found\n')
    const out = combine(dir)
    expect(out.parts['mlp-10k']).toMatchObject({ exitCode: 124, ok: false, error: 'no result JSON', logTail: 'line 1\nworker died' })
    expect(out.torch).toEqual({ skipped: 'python3 not found' })
    expect(out.nvidiaSmi).toBeNull()
  })

  it('auto is checked against the faster of webgpu and onnxruntime in the --backend all run', () => {
    const parts = {
      'mlp-all': { summary: [row('batched', 1, 20, { backend: 'webgpu' }), row('batched', 16, 90, { backend: 'onnxruntime' })] },
      auto: { backend: 'onnxruntime', summary: [row('batched', 1, 95)] },
    }
    expect(targets(parts, false).find((t: { what: string }) => t.what.startsWith('auto'))).toMatchObject({ value: 'onnxruntime', limit: 'webgpu', met: false })
  })
})

describe('gpu-check.sh end to end (CPU adapter allowed, fake nvidia-smi and python3, tiny shapes)', () => {
  it('writes one JSON with the adapter, nvidia-smi and every part, each run with its device counters', { timeout: 420_000 }, (ctx) => {
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
    const r = spawnSync('bash', [script, '--allow-cpu-adapter', '--quick', '--only', 'mlp-10k,torch-10k,trees-10k,mlp-all', '--out', outFile], {
      encoding: 'utf8',
      env: cleanEnv({ PATH: `${bin}${delimiter}${process.env.PATH}` }),
      timeout: 400_000,
      cwd: tmp,
    })
    if (skipWithout('webgpu', r.status !== 4, `no WebGPU adapter here: ${r.stderr.trim().split('\n').pop()}`)) return ctx.skip()
    expect(r.status, r.stderr).toBe(0)
    const out = JSON.parse(readFileSync(outFile, 'utf8'))
    expect(JSON.parse(r.stdout)).toEqual(out)
    expect(out.options).toMatchObject({ allowCpuAdapter: true, quick: true })
    expect(out.nvidiaSmi.list).toEqual(['GPU 0: Fake GPU (UUID: GPU-fake)'])
    expect(Object.keys(out.parts).sort()).toEqual(['mlp-10k', 'mlp-all', 'torch-10k', 'trees-10k'])
    const mlp = out.parts['mlp-10k']
    expect(mlp).toMatchObject({ exitCode: 0, ok: true, backend: 'webgpu', verification: { sameWork: true } })
    expect(mlp.summary.map((s: { strategy: string }) => s.strategy)).toEqual(['sequential', 'pool', 'pool', 'batched', 'batched'])
    for (const s of mlp.summary) expect(s.readbacksPerEpoch).toBe(1)
    expect(mlp.gpuBusy.every((b: { meanUtil: number }) => b.meanUtil === 42)).toBe(true)
    expect(out.parts['torch-10k']).toMatchObject({ ok: true, torch: 'fake' })
    expect(out.parts['trees-10k']).toMatchObject({
      exitCode: 0,
      ok: true,
      backend: 'webgpu',
      model: { kind: 'gbdt', rounds: 3 },
      verification: { sameWork: true },
    })
    expect(new Set(out.parts['mlp-all'].summary.map((s: { backend: string }) => s.backend))).toContain('onnxruntime')
    expect(out.targets.find((t: { what: string }) => t.what.startsWith('MLP batched, 50 models × 10 000')).text).toContain('CPU adapter: not GPU numbers')
    expect(r.stderr).toMatch(/gpu-check: (MET|MISS) MLP batched/)
    if (out.adapter.software) expect(out.adapter.description).toMatch(/llvmpipe|lavapipe|swiftshader/i)
  })
})
