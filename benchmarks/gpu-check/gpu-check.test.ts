// benchmarks/gpu-check.sh can only really run on an NVIDIA machine; here we check what can be
// checked without one: the script parses, a CPU adapter (lavapipe here) is refused with exit 3, an
// unbuilt project is refused at once, the budget arithmetic and each part's own limit (a stub CLI
// that hangs), the PyTorch reference compiles, the combiner's arithmetic and targets, the trees
// profile's unquantised timestamps, and the pipeline end to end with --allow-cpu-adapter --quick,
// a fake nvidia-smi and a fake python3 on PATH.
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { delimiter, dirname, join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_CONFIG, gpuBusyByStrategy, type TelemetrySample } from '@shared/contract'
import { batchesPerEpoch, mlpFamily } from '@shared/families/mlp'
import { BackendUnavailableError } from '../../src-main/engine/backend/types'
import { UNQUANTISED_TIMESTAMPS } from '../../src-main/engine/webgpu/dawn'
import { openWgslDevice } from '../../src-main/engine/webgpu/device'
import { skipWithout } from '../../src-main/testing/capability'
// @ts-expect-error plain ESM script without types
import { busySamples, combine, MIN_BUSY_SAMPLES, targets } from './combine.mjs'
import { QUANTISED_AT_NS, timestampGrid } from './timestamp-grid'

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
  it('is valid bash', () => {
    const r = spawnSync('bash', ['-n', script], { encoding: 'utf8' })
    expect(r.status, r.stderr).toBe(0)
  })

  it('is shellcheck-clean', (ctx) => {
    if (skipWithout('shellcheck', hasCommand('shellcheck'), 'shellcheck is not installed')) return ctx.skip()
    const r = spawnSync('shellcheck', ['-S', 'warning', script], { encoding: 'utf8' })
    expect(r.stdout + r.stderr).toBe('')
  })

  it('--help prints the usage from the header', () => {
    const r = spawnSync('bash', [script, '--help'], { encoding: 'utf8' })
    expect(r.status).toBe(0)
    expect(r.stdout).toContain('--probe-only')
    expect(r.stdout).toContain('pack.sh gpu-pack')
  })

  it('bad usage exits 2, naming the flag and what it takes', () => {
    const bad = (args: string[], says: string) => {
      const r = spawnSync('bash', [script, ...args], { encoding: 'utf8' })
      expect(r.status, r.stderr).toBe(2)
      expect(r.stderr).toContain(says)
    }
    bad(['--frobnicate'], 'unknown option --frobnicate')
    bad(['--budget', '7m'], "--budget takes whole seconds (got '7m')")
    bad(['--timeout', '-1'], "--timeout takes whole seconds, at least 1 (got '-1')")
    bad(['--timeout', '0'], "--timeout takes whole seconds, at least 1 (got '0'; 0 would be no limit)")
    bad(['--only', 'mlp-10k,mlp-busyy'], "no part named 'mlp-busyy' (parts: mlp-10k torch-10k")
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
    if (skipWithout('python3', hasCommand('python3'), 'python3 is not installed')) return ctx.skip()
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

/** A project folder with this checkout's scripts and node_modules, and only the given files besides (stubs of out/). */
function fakeProject(name: string, files: Record<string, string>): string {
  const dir = join(tmp, name)
  mkdirSync(dir)
  symlinkSync(join(root, 'benchmarks'), join(dir, 'benchmarks'))
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
  for (const [path, body] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), body)
  }
  return dir
}

interface Plan {
  deviceCommandS: number
  unpackAllowanceS: number
  budgetS: number
  killGraceS: number
  finalCombineS: number
  worstCaseS: number
  mlpBusyEpochs: number
  profileInnerBudgetS: number
  parts: { name: string; expectedS: number; limitS: number }[]
}

function plan(...args: string[]): Plan {
  const r = spawnSync('bash', [script, '--plan', ...args], { encoding: 'utf8' })
  expect(r.status, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as Plan
}

describe('gpu-check.sh: the budget, and every part under its own limit', () => {
  it('unpacking, the default budget, a part’s kill grace and the last combine fit the 480 s device command, with margin', () => {
    const p = plan()
    expect(p.deviceCommandS).toBe(480)
    expect(p.worstCaseS).toBe(p.unpackAllowanceS + p.budgetS + p.killGraceS + p.finalCombineS)
    expect(p.deviceCommandS - p.worstCaseS).toBeGreaterThanOrEqual(20)
    for (const part of p.parts) {
      // its own limit holds what it is expected to take, and one hung part cannot take the budget
      expect(part.limitS, part.name).toBeGreaterThanOrEqual(part.expectedS)
      expect(part.limitS, part.name).toBeLessThanOrEqual(p.budgetS / 2)
    }
    // the profiler starts no shape after its own budget: its limit leaves the last shape time to finish
    expect(p.parts.find((x) => x.name === 'trees-profile')!.limitS).toBeGreaterThanOrEqual(p.profileInnerBudgetS + 30)
    // the script runs exactly the parts of its plan, in its order
    const called = [...readFileSync(script, 'utf8').matchAll(/^\s*(?:\[ \$torch_ok = 1 \] && )?part ([a-z0-9-]+) /gm)].map((m) => m[1])
    expect(called).toEqual(p.parts.map((x) => x.name))
  })

  it('docs/benchmarks.md shows the plan as the script has it', () => {
    const p = plan()
    const doc = readFileSync(join(root, 'docs/benchmarks.md'), 'utf8')
    for (const part of p.parts) expect(doc).toContain(`| ${part.name} | ${part.expectedS} | ${part.limitS} |`)
    expect(doc).toContain(`| \`--budget\` (default): everything the script does from its start, ICD search and adapter probe included | ${p.budgetS} |`)
    expect(doc).toContain(`| **worst case** | **${p.worstCaseS} (${p.deviceCommandS - p.worstCaseS} to spare)** |`)
  })

  it('--budget, --timeout and --quick change the plan as they say', () => {
    const p = plan('--budget', '300')
    expect(p).toMatchObject({ budgetS: 300, worstCaseS: p.unpackAllowanceS + 300 + p.killGraceS + p.finalCombineS })
    expect(new Set(plan('--timeout', '7').parts.map((x) => x.limitS))).toEqual(new Set([7]))
    // whole seconds in base 10 (bash's arithmetic would read 08 as a bad octal number)
    expect(plan('--budget', '08', '--timeout', '09')).toMatchObject({ budgetS: 8, parts: expect.arrayContaining([expect.objectContaining({ limitS: 9 })]) })
    expect(new Set(plan('--quick').parts.map((x) => x.expectedS))).toEqual(new Set([5]))
  })

  it('mlp-busy trains long enough for 10 GPU-busy samples at 1 Hz even at the H200’s fastest dispatch', () => {
    const epochs = plan().mlpBusyEpochs
    const workload = { size: 200_000, testSplit: DEFAULT_CONFIG.testSplit, model: { ...mlpFamily.defaults, epochs } } as Parameters<typeof batchesPerEpoch>[0]
    // one hidden layer: 4 dispatches a step (the count mlp-webgpu/parity.test.ts holds the engine to);
    // 12.5 µs a chained dispatch on the H200 (../shared/research/gpu.md): the least device time it can take
    const deviceS = batchesPerEpoch(workload) * 4 * epochs * 12.5e-6
    expect(deviceS).toBeGreaterThanOrEqual(15)
    expect(epochs).toBeLessThanOrEqual(mlpFamily.fields.find((f) => f.key === 'epochs')!.range!.max!)
    expect(readFileSync(script, 'utf8')).toMatch(/part mlp-busy bench .*--epochs "\$mlp_busy_epochs"/)
  })

  it('stops at once, in one line, with exit 5 and the JSON saying so, when the project is not built (bin/trainpool.js alone is no build)', () => {
    const dir = fakeProject('unbuilt', { 'bin/trainpool.js': readFileSync(join(root, 'bin/trainpool.js'), 'utf8') })
    const outFile = join(tmp, 'unbuilt.json')
    const r = spawnSync('bash', [script, '--project', dir, '--out', outFile], { encoding: 'utf8', env: cleanEnv(), cwd: tmp, timeout: 60_000 })
    expect(r.status, r.stderr).toBe(5)
    expect(r.stdout).toBe('')
    const lines = r.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(
      /^gpu-check: STOPPED: the project is not built: out\/main\/cli\.js out\/main\/worker\.js missing in \S+ \(run `npm run build:gpu-check` before packing\); nothing ran \(JSON: /,
    )
    const out = JSON.parse(readFileSync(outFile, 'utf8'))
    expect(out.stopped).toMatch(/^the project is not built: out\/main\/cli\.js/)
    expect(out).toMatchObject({ adapter: null, parts: {} })
  })

  it('refuses a build without the trees profile’s bundle while trees-profile is to run, and goes on without that part', () => {
    const dir = fakeProject('no-profile', { 'out/main/cli.js': 'process.exit(0)\n', 'out/main/worker.js': '' })
    const run = (...args: string[]) =>
      spawnSync('bash', [script, '--project', dir, '--skip-torch', '--out', join(tmp, 'no-profile.json'), ...args], {
        encoding: 'utf8',
        env: cleanEnv(),
        cwd: tmp,
        timeout: 150_000,
      })
    const refused = run()
    expect(refused.status, refused.stderr).toBe(5)
    expect(refused.stderr.trim()).toMatch(/^gpu-check: STOPPED: the project is not built: out\/bench\/webgpu-profile\.mjs missing .*or --skip trees-profile\)/)
    // past the build check: the adapter probe decides (3 lavapipe refused, 4 no adapter, 0 a GPU)
    const goesOn = run('--only', 'mlp-10k')
    expect(goesOn.status, goesOn.stderr).not.toBe(5)
    expect(goesOn.stderr).not.toContain('not built')
  })

  it('stops a part that hangs at its own limit and runs the next; skips a part the budget cannot hold', { timeout: 300_000 }, (ctx) => {
    const dir = fakeProject('hangs', { 'out/main/cli.js': 'setInterval(() => {}, 1000)\n', 'out/main/worker.js': '' })
    const run = (outFile: string, ...args: string[]) =>
      spawnSync('bash', [script, '--project', dir, '--allow-cpu-adapter', '--skip-torch', '--only', 'mlp-10k,trees-10k', '--out', outFile, ...args], {
        encoding: 'utf8',
        env: cleanEnv(),
        cwd: tmp,
        timeout: 140_000,
      })
    const hung = run(join(tmp, 'hangs.json'), '--timeout', '2')
    if (skipWithout('webgpu', hung.status !== 4, `no WebGPU adapter here: ${hung.stderr.trim().split('\n').pop()}`)) return ctx.skip()
    expect(hung.status, hung.stderr).toBe(0)
    const { killGraceS } = plan()
    const out = JSON.parse(readFileSync(join(tmp, 'hangs.json'), 'utf8'))
    for (const name of ['mlp-10k', 'trees-10k']) {
      expect(out.parts[name], name).toMatchObject({ exitCode: 124, limitS: 2, ok: false, error: 'no result JSON' })
      expect(out.parts[name].wallS).toBeGreaterThanOrEqual(2)
      expect(out.parts[name].wallS).toBeLessThan(2 + killGraceS + 20)
    }
    expect(hung.stderr).toContain('mlp-10k: stopped past its limit of 2 s (exit 124)')

    const skipped = run(join(tmp, 'no-budget.json'), '--budget', '0')
    expect(skipped.status, skipped.stderr).toBe(0)
    const none = JSON.parse(readFileSync(join(tmp, 'no-budget.json'), 'utf8'))
    for (const name of ['mlp-10k', 'trees-10k'])
      expect(none.parts[name].skipped).toMatch(/^the budget \(--budget 0 s\) had -?\d+ s left, this part needs about 30 s$/)
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

  it('mlp-busy says whether it got ≥ 10 GPU-busy samples; a busy target on fewer is measured but not judged', () => {
    const dir = join(tmp, 'combine-busy')
    mkdirSync(dir)
    const busy = (n: number, util: number) => Array.from({ length: n }, (_, i) => sample(i * 1000, 'batched', util))
    const at200k = (samples: TelemetrySample[]) => ({
      ...run([{ ...row('batched', 1, 30_000), size: 200_000 }], { telemetry: { samples } }),
      measurements: [],
    })
    writeFileSync(join(dir, 'part-mlp-busy.exit'), '0\n')
    writeFileSync(join(dir, 'part-mlp-busy.json'), JSON.stringify(at200k(busy(12, 80))))
    writeFileSync(join(dir, 'part-trees-200k.exit'), '0\n')
    writeFileSync(join(dir, 'part-trees-200k.json'), JSON.stringify(at200k(busy(4, 90))))
    const out = combine(dir)
    expect(out.parts['mlp-busy'].busySamples).toEqual({ strategy: 'batched', got: 12, needed: MIN_BUSY_SAMPLES, enough: true })
    const target = (what: string) => out.targets.find((t: { what: string }) => t.what.startsWith(what))
    expect(target('GPU busy, MLP')).toMatchObject({ value: 80, met: true })
    expect(target('GPU busy, MLP').text).toContain('12 samples at 1 Hz')
    expect(target('GPU busy, trees')).toMatchObject({ value: 90, met: null })
    expect(target('GPU busy, trees').text).toContain('4 samples at 1 Hz, too few to judge (≥ 10 needed)')
    // no samples at all (a run too short, or no nvidia-smi): not enough, never a pass
    expect(busySamples({ gpuBusy: [] }, 'batched')).toEqual({ strategy: 'batched', got: 0, needed: MIN_BUSY_SAMPLES, enough: false })
    expect(busySamples(undefined, 'batched').enough).toBe(false)
  })

  it('keeps why the check stopped and each part’s own limit', () => {
    const dir = join(tmp, 'combine-stopped')
    mkdirSync(dir)
    writeFileSync(join(dir, 'meta.json'), JSON.stringify({ startedAt: 'T0', stopped: 'the project is not built: out/main/cli.js missing' }))
    writeFileSync(join(dir, 'part-mlp-10k.exit'), '124\n')
    writeFileSync(join(dir, 'part-mlp-10k.limit_s'), '60\n')
    const out = combine(dir)
    expect(out.stopped).toBe('the project is not built: out/main/cli.js missing')
    expect(out.parts['mlp-10k']).toMatchObject({ exitCode: 124, limitS: 60 })
    expect(combine(mkdtempSync(join(tmp, 'combine-empty-'))).stopped).toBeNull()
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
    // --timeout 200: the parts' own limits are sized for an H200, not for lavapipe on a busy machine
    const r = spawnSync(
      'bash',
      [script, '--allow-cpu-adapter', '--quick', '--timeout', '200', '--only', 'mlp-10k,torch-10k,trees-10k,mlp-all', '--out', outFile],
      {
        encoding: 'utf8',
        env: cleanEnv({ PATH: `${bin}${delimiter}${process.env.PATH}` }),
        timeout: 400_000,
        cwd: tmp,
      },
    )
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
    // the fake nvidia-smi's 42 %, read while measuring (an empty list would say nothing)
    expect(mlp.gpuBusy.length).toBeGreaterThan(0)
    for (const b of mlp.gpuBusy) expect(b).toMatchObject({ meanUtil: 42 })
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

describe('the trees profile’s timestamps (Dawn quantises them unless asked not to)', () => {
  it('are on a 65 536 ns grid by default and raw with UNQUANTISED_TIMESTAMPS; timestampGrid tells which', async (ctx) => {
    const open = async (flags: string[]) => {
      try {
        return await openWgslDevice('timestamp-grid-test', flags)
      } catch (err) {
        if (err instanceof BackendUnavailableError) return null
        throw err
      }
    }
    const plain = await open([])
    if (skipWithout('webgpu', plain !== null, 'no WebGPU adapter here')) return ctx.skip()
    try {
      if (skipWithout('timestamp-query', plain!.timestamps, `${plain!.description} has no timestamp-query`)) return ctx.skip()
      const grid = await timestampGrid(plain!)
      expect(grid?.quantised).toBe(true)
      expect(grid!.gridNs % 65_536).toBe(0)
    } finally {
      plain!.release()
    }
    const raw = (await open([UNQUANTISED_TIMESTAMPS]))!
    try {
      const grid = await timestampGrid(raw)
      expect(grid?.quantised).toBe(false)
      expect(grid!.gridNs).toBeLessThan(QUANTISED_AT_NS)
      expect(raw.bufferStats().live).toBe(0)
    } finally {
      raw.release()
    }
  })

  it('webgpu-profile asks for raw timestamps and says whether it got them', { timeout: 240_000 }, (ctx) => {
    const r = spawnSync(
      join(root, 'node_modules/.bin/tsx'),
      [join(root, 'benchmarks/gbdt/webgpu-profile.mts'), '--rows', '300', '--models', '1', '--rounds', '1', '--profile'],
      { cwd: root, encoding: 'utf8', env: cleanEnv(), timeout: 230_000 },
    )
    if (skipWithout('webgpu', !/Dawn found no WebGPU adapter|failed to load/.test(r.stderr), r.stderr.trim().split('\n').pop() ?? '')) return ctx.skip()
    expect(r.status, r.stderr).toBe(0)
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!)
    if (skipWithout('timestamp-query', out.timestamps, `${out.adapter} has no timestamp-query`)) return ctx.skip()
    expect(out.timestampQuantisation).toMatchObject({ asked: 'off', tookEffect: true })
    expect(out.timestampQuantisation.gridNs).toBeLessThan(QUANTISED_AT_NS)
    expect(r.stderr).toContain('webgpu-profile: timestamp quantisation off: readings on a')
  })
})
