// The desktop's "Open…" for a data file, end to end in main with a stand-in for Electron's dialog:
// the dialog asks for CSV/TSV/Parquet files (modal to the app window), the service loads the chosen
// file into the store's data cache and answers its DataSetInfo, a cancelled dialog answers null and
// caches nothing; browser mode and the CLI refuse chooseDataFile, saying to upload or name the file.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import type { OpenDialogOptions } from 'electron'
import { dispatch } from '../service/dispatch'
import { BenchService } from '../service/bench-service'
import { RunStore } from '../store/run-store'
import { NodeLauncher } from '../pool/node-launcher'
import { dataFilePicker } from './data-file-dialog'

function setup(answer: () => { canceled: boolean; filePaths: string[] }, shell: 'electron' | 'browser' | 'cli' = 'electron') {
  const dir = mkdtempSync(join(tmpdir(), 'trainpool-open-dialog-'))
  const file = join(dir, 'cars.csv')
  writeFileSync(file, 'weight,power,mpg\n1200,90,31.5\n1500,,27\n1800,150,22.1\n')
  const store = new RunStore(join(dir, 'runs'))
  const win = { id: 7 }
  const showOpenDialog = vi.fn(async (..._args: unknown[]) => answer())
  const pickDataFile = dataFilePicker({ dialog: () => ({ showOpenDialog }) as never, getWindow: () => win as never, defaultDir: () => '/home/u/Documents' })
  const service = new BenchService({ launcher: new NodeLauncher(), store, shell, telemetry: false, ...(shell === 'electron' ? { pickDataFile } : {}) })
  return { file, service, showOpenDialog, win }
}

describe('chooseDataFile (desktop open dialog)', () => {
  it('asks for a CSV/TSV/Parquet file in a dialog modal to the app window, loads the choice and lists it', async () => {
    let path = ''
    const { file, service, showOpenDialog, win } = setup(() => ({ canceled: false, filePaths: [path] }))
    path = file
    const reply = await dispatch(service, 'chooseDataFile', undefined)
    expect(reply.ok).toBe(true)
    const info = reply.ok ? reply.value : null
    expect(info).toMatchObject({ name: 'cars.csv', path: file, format: 'csv', rows: 3 })
    expect(info!.columns.map((c) => [c.name, c.type, c.missing, c.min, c.max])).toEqual([
      ['weight', 'numeric', 0, 1200, 1800],
      ['power', 'numeric', 1, 90, 150],
      ['mpg', 'numeric', 0, 22.1, 31.5],
    ])
    const [parent, options] = showOpenDialog.mock.calls[0] as [unknown, OpenDialogOptions]
    expect(parent).toBe(win)
    expect(options).toMatchObject({ properties: ['openFile'], defaultPath: '/home/u/Documents' })
    expect(options.filters?.[0]).toEqual({ name: 'Data files (CSV, TSV, Parquet)', extensions: ['csv', 'tsv', 'parquet'] })
    expect((await service.dataSets()).map((d) => d.sha256)).toEqual([info!.sha256])
    expect(await service.dataSetInfo({ sha256: info!.sha256 })).toMatchObject({ name: 'cars.csv', rows: 3 })
  })

  it('a cancelled dialog answers null and caches nothing', async () => {
    const { service } = setup(() => ({ canceled: true, filePaths: [] }))
    expect(await dispatch(service, 'chooseDataFile', undefined)).toEqual({ ok: true, value: null })
    expect(await service.dataSets()).toEqual([])
  })

  it('a file that does not load is an error naming it, and nothing is cached', async () => {
    const { service } = setup(() => ({ canceled: false, filePaths: ['/nowhere/missing.csv'] }))
    const reply = await dispatch(service, 'chooseDataFile', undefined)
    expect(reply.ok).toBe(false)
    expect(reply.ok ? '' : reply.error.message).toMatch(/missing\.csv/)
    expect(await service.dataSets()).toEqual([])
  })

  it('browser mode and the CLI have no dialog: refused, saying to upload or to name the file', async () => {
    const browser = await dispatch(setup(() => ({ canceled: true, filePaths: [] }), 'browser').service, 'chooseDataFile', undefined)
    expect(browser).toMatchObject({ ok: false, error: { code: 'invalid-input' } })
    expect(browser.ok ? '' : browser.error.message).toMatch(/only the desktop app has: in browser mode upload the file instead .*POST \/api\/upload\?name=FILE/)
    const cli = await dispatch(setup(() => ({ canceled: true, filePaths: [] }), 'cli').service, 'chooseDataFile', undefined)
    expect(cli.ok ? '' : cli.error.message).toMatch(/trainpool bench --data FILE/)
  })

  it('dataSetInfo refuses a malformed sha256 (naming the field) and answers not-found for an unknown one', async () => {
    const { service } = setup(() => ({ canceled: true, filePaths: [] }))
    const bad = await dispatch(service, 'dataSetInfo', { sha256: 'xyz' })
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid-input' } })
    expect(bad.ok ? '' : bad.error.message).toMatch(/sha256/)
    const unknown = await dispatch(service, 'dataSetInfo', { sha256: 'c'.repeat(64) })
    expect(unknown).toMatchObject({ ok: false, error: { code: 'not-found' } })
  })
})
