// The fake the renderer's tests use (src-shared/testing/fake-service.ts) cannot drift from the real
// service: every request below goes through dispatch (the path IPC and the WebSocket take) to both a
// BenchService over a temp store and a FakeService holding the same runs, and the answers must be
// the same — values, error codes and the fields they name. What the fake does not simulate (a run's
// training and its event stream; file contents of exports and PDFs; the probe's details) is compared
// by its shape only, and said so where it is.
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type BackendCapability, type Envelope, type FamilyCalibration, type Method, presetConfig, type RunResult } from '@shared/contract'
import { sweepResult } from '@shared/testing/advice-fixtures'
import { FakeService } from '@shared/testing/fake-service'
import { CAPABILITIES } from '@shared/testing/fixtures'
import { RunStore } from '../store/run-store'
import { FIXED_PROBE } from '../testing/service-harness'
import { fakeRun } from '../testing/run-fixtures'
import { BenchService } from './bench-service'
import { dispatch } from './dispatch'
import type { BenchServiceApi } from './types'

const SHA = 'f'.repeat(64)

let dir: string
let real: BenchService
let fake: FakeService
let runs: RunResult[]

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'trainpool-conformance-'))
  runs = [fakeRun({}, '20250101-120000-aaaaaa'), { ...sweepResult({ runId: '20250102-120000-bbbbbb' }), startedAt: '2025-01-02T12:00:00.000Z' }]
  const store = new RunStore(dir)
  for (const r of runs) await store.save(r)
  real = new BenchService({
    launcher: {} as never,
    store,
    shell: 'cli',
    probe: FIXED_PROBE,
    checkLaunchers: { slurm: async () => CAPABILITIES.launchers.slurm },
    telemetry: false,
    renderPdf: async () => Buffer.from('%PDF-1.7'),
  })
  fake = new FakeService({ capabilities: { shell: 'cli' }, runs })
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

/** The same request to both; the two envelopes. */
async function both<M extends Method>(method: M, payload?: unknown): Promise<[Envelope<unknown>, Envelope<unknown>]> {
  const ask = (s: BenchServiceApi) => dispatch<M>(s, method, payload) as Promise<Envelope<unknown>>
  return [await ask(real), await ask(fake)]
}

/** Same outcome: equal values (after `view`), or the same error code, fields and message. */
async function expectSame<M extends Method>(method: M, payload?: unknown, view: (value: unknown) => unknown = (v) => v): Promise<Envelope<unknown>> {
  const [r, f] = await both(method, payload)
  const label = `${method} ${JSON.stringify(payload)}`
  expect(f.ok, `${label}: ok on the fake as on the service (${JSON.stringify(r.ok ? 'ok' : r.error)})`).toBe(r.ok)
  if (r.ok && f.ok) expect(view(f.value), label).toEqual(view(r.value))
  if (!r.ok && !f.ok) {
    expect(f.error.code, label).toBe(r.error.code)
    expect(
      f.error.issues?.map((i) => i.field),
      label,
    ).toEqual(r.error.issues?.map((i) => i.field))
  }
  return r
}

describe('FakeService conforms to BenchService (through dispatch)', () => {
  it('lists and reads the same runs; an unknown run is not-found on both', async () => {
    expect((await expectSame('listRuns')).ok).toBe(true)
    expect((await expectSame('getRun', { runId: runs[0].runId })).ok).toBe(true)
    expect(await expectSame('getRun', { runId: '20990101-000000-ffffff' })).toMatchObject({ ok: false, error: { code: 'not-found' } })
    expect(await expectSame('getRun', { runId: '../etc' })).toMatchObject({ ok: false, error: { code: 'invalid-input' } })
  })

  it('renames and tags the same way (cleaned, removed by an empty value), and the lists agree after', async () => {
    const id = runs[0].runId
    await expectSame('renameRun', { runId: id, name: '  two   words ' })
    await expectSame('getRun', { runId: id })
    await expectSame('renameRun', { runId: id, name: 'baseline' })
    await expectSame('tagRun', { runId: id, tags: ['wasm', 'laptop', 'wasm', ''] })
    await expectSame('listRuns')
    await expectSame('getRun', { runId: id })
    await expectSame('renameRun', { runId: id, name: '' })
    await expectSame('tagRun', { runId: id, tags: [] })
    await expectSame('listRuns')
    await expectSame('renameRun', { runId: '20990101-000000-ffffff', name: 'x' })
    await expectSame('tagRun', { runId: id, tags: 'wasm' })
  })

  it("names exports and the PDF report alike (file contents are the fake's own)", async () => {
    const id = runs[0].runId
    await expectSame('renameRun', { runId: id, name: 'my run: wasm/cpu' })
    for (const format of ['json', 'csv', 'md'] as const) {
      const r = await expectSame('exportRun', { runId: id, format }, (v) => ({ ...(v as object), content: undefined }))
      expect(r).toMatchObject({ ok: true, value: { fileName: `trainpool-my-run-wasm-cpu-${id}.${format}` } })
    }
    await expectSame('exportRun', { runId: id, format: 'xml' })
    await expectSame('exportRun', { runId: '20990101-000000-ffffff', format: 'csv' })
    await expectSame('reportPdf', { runId: id }, (v) => (v as { fileName: string }).fileName)
    await expectSame('reportPdf', { runId: '20990101-000000-ffffff' })
  })

  it('a run that kept no models has no best model; an unknown run is not-found', async () => {
    await expectSame('bestModel', { runId: runs[0].runId })
    await expectSame('bestModel', { runId: '20990101-000000-ffffff' })
    await expectSame('bestModel', { runId: '../x' })
  })

  it('deletes the same way: gone from the list, not-found after', async () => {
    const id = runs[0].runId
    await expectSame('deleteRun', { runId: id })
    await expectSame('deleteRun', { runId: id })
    await expectSame('getRun', { runId: id })
    await expectSame('listRuns')
  })

  it('idle: nothing to cancel, no current run', async () => {
    await expectSame('cancel', {})
    await expectSame('cancel', { runId: runs[0].runId })
    await expectSame('currentRun')
  })

  it('data sets: none cached, an unknown one not-found, a malformed hash refused', async () => {
    await expectSame('dataSets')
    await expectSame('dataSetInfo', { sha256: SHA })
    await expectSame('deleteDataSet', { sha256: SHA })
    await expectSame('dataSetInfo', { sha256: 'abc' })
  })

  it('advises alike from a stored sweep, refuses alike where there is nothing to verify', async () => {
    const sweep = runs[1].runId
    expect(await expectSame('advise', { runId: sweep, models: 32, size: 2000 })).toMatchObject({ ok: true, value: { refusal: null } })
    expect(await expectSame('advise', { runId: sweep, models: 32, size: 5000 })).toMatchObject({ ok: true, value: { options: [] } })
    await expectSame('advise', { runId: sweep, models: 32 })
    await expectSame('advise', { runId: '20990101-000000-ffffff', models: 32, size: 2000 })
    await expectSame('verifyAdvice', { runId: sweep, models: 32, size: 5000 })
  })

  it('refuses the same bad configs with the same fields', async () => {
    for (const config of [{ models: 0 }, { preset: 'huge' }, { backend: 'cuda' }, { sizes: [] }, { strategies: ['parallel'] }]) {
      await expectSame('start', { config })
    }
    await expectSame('start', { config: 'smoke' })
  })

  it("announces capabilities of the same shape (the probe's details are the fake's own)", async () => {
    const [r, f] = await both('capabilities')
    expect(r.ok && f.ok).toBe(true)
    if (!r.ok || !f.ok) return
    const keys = (v: unknown) => Object.keys(v as object).sort()
    expect(keys(f.value)).toEqual(keys(r.value))
    expect((f.value as { shell: string }).shell).toBe((r.value as { shell: string }).shell)
    // the launchers come from the same answer about sbatch: the same on both
    expect((f.value as { launchers: unknown }).launchers).toEqual((r.value as { launchers: unknown }).launchers)
  })

  it('calibrate: an unknown family or a malformed request is refused alike', async () => {
    await expectSame('calibrate', { family: 'trees' })
    await expectSame('calibrate', { family: 3 })
    await expectSame('calibrate', { family: 'mlp', extra: true })
    await expectSame('calibrate')
  })

  it("calibrate: with nothing auto may pick available, the same table and reasons on both (what a measured backend takes is the service's own)", async () => {
    const unavailable = CAPABILITIES.backends.map((b) => ({ ...b, available: false, detail: 'not on this machine' })) as BackendCapability[]
    real = new BenchService({
      launcher: {} as never,
      store: new RunStore(dir),
      shell: 'cli',
      probe: async () => unavailable,
      telemetry: false,
      autoRule: 'calibrated',
    })
    fake = new FakeService({ capabilities: { shell: 'cli', backends: unavailable, cpuCount: cpus().length } })
    const undated = (v: unknown) =>
      (v as FamilyCalibration[]).map((c) => ({ ...c, calibratedAt: undefined, reason: c.reason.replace(/calibrated [\d-]+\)$/, '') }))
    const r = await expectSame('calibrate', {}, undated)
    expect(r).toMatchObject({
      ok: true,
      value: [
        { kind: 'mlp', auto: null },
        { kind: 'gbdt', auto: null },
      ],
    })
    await expectSame('calibrate', { family: 'gbdt' }, undated)
  })

  it('refuses launcher slurm alike where sbatch cannot submit, on field launcher', async () => {
    const r = await expectSame('start', { config: { ...presetConfig('smoke'), launcher: { engine: 'slurm', partition: 'gpu' } } })
    expect(r).toMatchObject({ ok: false, error: { code: 'invalid-input', issues: [{ field: 'launcher' }] } })
    expect(r.ok || r.error.message).toContain('not found on PATH')
  })
})
