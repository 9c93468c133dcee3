import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { RunStore } from '../store/run-store'
import { fakeRun } from '../testing/run-fixtures'
import { BenchService } from './bench-service'
import { dispatch } from './dispatch'

let dir: string
let store: RunStore
let service: BenchService
const renderPdf = vi.fn(async () => Buffer.from('%PDF-1.7 test'))
beforeEach(async () => {
  dir = mkdtempSync(join(os.tmpdir(), 'trainpool-svc-'))
  store = new RunStore(dir)
  await store.save(fakeRun({}, 'run-a'))
  service = new BenchService({ launcher: {} as never, store, shell: 'cli', renderPdf })
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

describe('run management through dispatch (the path IPC and WebSocket take)', () => {
  it('renames, tags, exports and deletes a stored run', async () => {
    expect(await dispatch(service, 'renameRun', { runId: 'run-a', name: 'baseline' })).toMatchObject({ ok: true, value: { runId: 'run-a', name: 'baseline' } })
    expect(await dispatch(service, 'tagRun', { runId: 'run-a', tags: ['wasm', 'laptop'] })).toMatchObject({ ok: true, value: { tags: ['wasm', 'laptop'] } })
    expect((await store.get('run-a')).name).toBe('baseline')
    const csv = await dispatch(service, 'exportRun', { runId: 'run-a', format: 'csv' })
    expect(csv).toMatchObject({ ok: true, value: { fileName: 'trainpool-baseline-run-a.csv', mimeType: 'text/csv' } })
    const json = await dispatch(service, 'exportRun', { runId: 'run-a', format: 'json' })
    expect(json.ok && JSON.parse(json.value.content).name).toBe('baseline')
    const pdf = await dispatch(service, 'reportPdf', { runId: 'run-a' })
    expect(pdf).toMatchObject({ ok: true, value: { fileName: 'trainpool-baseline-run-a.pdf', sizeBytes: 13 } })
    expect(pdf.ok && Buffer.from(pdf.value.base64!, 'base64').toString()).toContain('%PDF')
    expect(await dispatch(service, 'deleteRun', { runId: 'run-a' })).toEqual({ ok: true, value: { deleted: true } })
    expect(await dispatch(service, 'deleteRun', { runId: 'run-a' })).toMatchObject({ ok: false, error: { code: 'not-found' } })
  })

  it('refuses malformed payloads with a field error, before touching the store', async () => {
    for (const [method, payload, field] of [
      ['renameRun', { runId: '../etc', name: 'x' }, 'runId'],
      ['renameRun', { runId: 'run-a' }, 'name'],
      ['tagRun', { runId: 'run-a', tags: 'wasm' }, 'tags'],
      ['exportRun', { runId: 'run-a', format: 'xml' }, 'format'],
      ['deleteRun', { runId: 'run-a', force: true }, ''],
      ['reportPdf', undefined, ''],
    ] as const) {
      const res = await dispatch(service, method, payload)
      expect(res.ok, `${method} ${JSON.stringify(payload)}`).toBe(false)
      if (!res.ok) {
        expect(res.error.code).toBe('invalid-input')
        if (field) expect(res.error.issues?.map((i) => i.field)).toContain(field)
      }
    }
    expect(await store.get('run-a')).toEqual(fakeRun({}, 'run-a'))
  })
})
