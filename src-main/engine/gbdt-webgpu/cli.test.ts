// End to end: `trainpool bench --model gbdt --backend webgpu --preset smoke` — the real CLI, real
// worker processes on the device (lavapipe here and in CI) — trains every strategy with the same
// trees (tolerance 0), and each model's tree hash equals the one `--backend cpu` reports; a grid of
// configurations (a model set) is fused into one program, as on the CPU engine. Whether
// there is an adapter is asked of a worker process, not here: Dawn loaded in the test process
// itself sometimes aborts as that process exits (a mutex assertion in its teardown), which kills the
// test worker after the test has passed.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { parseRunResult, type RunResult } from '@shared/contract'
import { fusionText } from '@shared/leaderboard'
import { NodeLauncher } from '../../pool/node-launcher'
import { probeInWorker } from '../../service/backend-probe'
import { skipWithout } from '../../testing/capability'
import { killAll, spawnCli } from '../../testing/cli-process'

const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-gbdt-webgpu-cli-'))
let webgpu = { available: false, detail: 'not probed' }
beforeAll(async () => {
  webgpu = (await probeInWorker(new NodeLauncher())).find((b) => b.name === 'webgpu') ?? webgpu
})
afterAll(() => {
  killAll()
  rmSync(dir, { recursive: true, force: true })
})

async function bench(backend: string, more: string[] = []): Promise<{ run: RunResult; stdout: string }> {
  const json = join(dir, `${backend}${more.join('')}.json`)
  const cli = spawnCli('bench', ['--model', 'gbdt', '--backend', backend, '--preset', 'smoke', '--no-save', '--json', json, ...more])
  const { code } = await cli.exited
  expect(code, cli.out.stderr).toBe(0)
  return { run: parseRunResult(JSON.parse(readFileSync(json, 'utf8'))), stdout: cli.out.stdout }
}

/** model index → tree hash, per strategy */
function prints(run: RunResult): Map<string, string[]> {
  return new Map(run.measurements.map((m) => [m.strategy, [...m.perModel].sort((a, b) => a.index - b.index).map((p) => p.fingerprint ?? '')]))
}

it('bench --model gbdt --backend webgpu --preset smoke: every strategy, every model = the CPU engine (tree hash)', { timeout: 600_000 }, async (ctx) => {
  if (skipWithout('webgpu', webgpu.available, `no WebGPU adapter: ${webgpu.detail}`)) return ctx.skip()
  const [gpu, cpu] = await Promise.all([bench('webgpu'), bench('cpu')])
  expect(gpu.run.status).toBe('ok')
  expect(gpu.run.environment).toMatchObject({ backend: 'webgpu', backendFlags: { engine: 'webgpu-wgsl' } })
  expect(gpu.run.environment!.backendFlags.maxStorageBufferBindingSize).toBeGreaterThan(0)
  expect(gpu.stdout).toMatch(/same work: sequential 4\/4, pool 4\/4, batched 4\/4 models; per-model test MSE agree \(max rel\. Δ 0\.0e\+0, tolerance 0\)/)
  const g = prints(gpu.run)
  const c = prints(cpu.run)
  expect([...g.keys()]).toEqual(['sequential', 'pool', 'batched'])
  const reference = c.get('sequential')!
  expect(reference.every((h) => /^[0-9a-f]{16}$/.test(h))).toBe(true)
  expect(new Set(reference).size).toBe(4)
  for (const hashes of g.values()) expect(hashes).toEqual(reference)
  const mse = (run: RunResult) => [...run.measurements[0].perModel].sort((a, b) => a.index - b.index).map((p) => p.testMse)
  expect(mse(gpu.run)).toEqual(mse(cpu.run))
})

it("a max-depth × lambda × subsample grid: one fused program on the device, each model the CPU engine's trees", { timeout: 600_000 }, async (ctx) => {
  if (skipWithout('webgpu', webgpu.available, `no WebGPU adapter: ${webgpu.detail}`)) return ctx.skip()
  const grid = ['--max-depth', '2,4', '--lambda', '0,1', '--subsample', '0.8,1', '--workers', '1', '--strategies', 'sequential,batched']
  const [gpu, cpu] = await Promise.all([bench('webgpu', grid), bench('cpu', grid)])
  expect(gpu.run.status).toBe('ok')
  expect(gpu.stdout).toMatch(/same work: sequential 8\/8, batched 8\/8 models; per-model test MSE agree \(max rel\. Δ 0\.0e\+0, tolerance 0\)/)
  // depth, lambda and subsample differ per model within one dispatch: the worker's 8 models are one program
  expect(fusionText(gpu.run)).toMatch(/^batched W=1 trained the 8 models in 1 fused program \(8 models\)/)
  const batched = gpu.run.measurements.find((m) => m.strategy === 'batched')!
  expect(new Set(batched.perModel.map((p) => p.fusedGroup))).toEqual(new Set([0]))
  const reference = prints(cpu.run).get('sequential')!
  expect(new Set(reference).size).toBe(8)
  for (const hashes of prints(gpu.run).values()) expect(hashes).toEqual(reference)
})

it("--early-stopping over a set's folds: every strategy stops each model at the --backend cpu round, with its trees", { timeout: 600_000 }, async (ctx) => {
  if (skipWithout('webgpu', webgpu.available, `no WebGPU adapter: ${webgpu.detail}`)) return ctx.skip()
  const flags = ['--eta', '0.9,0.05', '--folds', '2', '--early-stopping', '2', '--workers', '1', '--strategies', 'sequential,batched']
  const [gpu, cpu] = await Promise.all([bench('webgpu', flags), bench('cpu', flags)])
  expect(gpu.run.status).toBe('ok')
  const stops = (run: RunResult) =>
    new Map(
      run.measurements.map((m) => [m.strategy, [...m.perModel].sort((a, b) => a.index - b.index).map((p) => [p.fingerprint, p.roundsTrained, p.bestRound])]),
    )
  const reference = stops(cpu.run).get('sequential')!
  // the fast configuration's models stop early, the slow one's train on
  expect(reference.some(([, trained]) => (trained as number) < (cpu.run.config.model as { rounds: number }).rounds)).toBe(true)
  for (const models of stops(gpu.run).values()) expect(models).toEqual(reference)
})

it(
  '--search halving: every strategy promotes the --backend cpu configurations and continues their models to the same trees',
  { timeout: 600_000 },
  async (ctx) => {
    if (skipWithout('webgpu', webgpu.available, `no WebGPU adapter: ${webgpu.detail}`)) return ctx.skip()
    const flags = ['--eta', '0.05,0.3,0.9', '--folds', '2', '--search', 'halving', '--factor', '3', '--workers', '1', '--strategies', 'sequential,batched']
    const [gpu, cpu] = await Promise.all([bench('webgpu', flags), bench('cpu', flags)])
    expect(gpu.run.status).toBe('ok')
    const rungs = (run: RunResult) =>
      new Map(run.measurements.map((m) => [m.strategy, [...m.perModel].sort((a, b) => a.index - b.index).map((p) => [p.fingerprint, p.roundsTrained])]))
    const reference = rungs(cpu.run).get('sequential')!
    // a configuration left after the first rung: its models trained fewer rounds than the promoted ones
    expect(new Set(reference.map(([, trained]) => trained)).size).toBeGreaterThan(1)
    for (const models of rungs(gpu.run).values()) expect(models).toEqual(reference)
  },
)
