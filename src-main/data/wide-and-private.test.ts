// The data loader's memory follows the data (a wide, short file costs what it weighs), numbers no
// float32 can hold are named, and the cache is private (files 0600 in 0700 folders) and never
// blocks on what someone put in it (a FIFO as info.json or table.f32).
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, promises as fs, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join, resolve } from 'node:path'
import { buildSync } from 'esbuild'
import { parquetWriteBuffer } from 'hyparquet-writer'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { DATASETS_DIR, tablePath } from './cache'
import { listDataSets, loadDataFile } from './index'
import { TableBuilder } from './table-builder'
import { readTableColumns } from './table-file'

const root = mkdtempSync(join(os.tmpdir(), 'trainpool-wide-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let n = 0
function fresh(): { store: string; file: (name: string, content: string | Uint8Array) => string } {
  const dir = join(root, `case-${n++}`)
  mkdirSync(dir)
  return {
    store: join(dir, 'store'),
    file: (name, content) => {
      writeFileSync(join(dir, name), content)
      return join(dir, name)
    },
  }
}

/** rows × columns of small numbers, a header c0,c1,… */
function wideCsv(rows: number, columns: number): string {
  const header = Array.from({ length: columns }, (_, c) => `c${c}`).join(',')
  const lines = Array.from({ length: rows }, (_, r) => Array.from({ length: columns }, (_, c) => ((r * 7 + c) % 100) / 10).join(','))
  return `${header}\n${lines.join('\n')}\n`
}

/** The bytes a table's numeric values need as float32. */
const float32Bytes = (rows: number, columns: number) => rows * columns * 4

describe('memory follows the rows actually read', () => {
  it('5 rows × 30 000 columns load within a budget of a few MiB (each column used to reserve 65 536 rows up front)', async () => {
    const { store, file } = fresh()
    // 30 000 columns × 16 rows (the first chunk) × 4 bytes = 1.9 MiB; 65 536 rows each would be 7.3 GiB
    const info = await loadDataFile(file('wide.csv', wideCsv(5, 30_000)), store, { budgetBytes: 4 * 2 ** 20 })
    expect(info).toMatchObject({ rows: 5 })
    expect(info.columns).toHaveLength(30_000)
    const { values } = readTableColumns(tablePath(store, info.sha256), [0, 29_999])
    expect([...values[0]]).toEqual([0, 0.7, 1.4, 2.1, 2.8].map(Math.fround))
    expect(values[1][4]).toBe(Math.fround(((4 * 7 + 29_999) % 100) / 10))
  })

  it('a 5 × 30 000 CSV loads under 200 MB peak RSS, in a process of its own', async () => {
    const { store, file } = fresh()
    const csv = file('wide.csv', wideCsv(5, 30_000))
    // the loader bundled for plain Node (tsx alone costs ~80 MB of the process's memory)
    const bundle = join(root, 'load-peak-rss.cjs')
    buildSync({
      entryPoints: [resolve(__dirname, '..', 'testing', 'load-peak-rss.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile: bundle,
      alias: { '@shared': resolve(__dirname, '..', '..', 'src-shared') },
      logLevel: 'error',
    })
    const child = spawn(process.execPath, [bundle, csv, store], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (c: Buffer) => (out += c.toString()))
    child.stderr.on('data', (c: Buffer) => (err += c.toString()))
    const code = await new Promise((r) => child.once('exit', r))
    expect(code, err).toBe(0)
    const { maxRssBytes, rows, columns } = JSON.parse(out) as { maxRssBytes: number; rows: number; columns: number }
    console.log(`[data] 5 × 30 000 CSV (${(await fs.stat(csv)).size} bytes): peak RSS ${(maxRssBytes / 2 ** 20).toFixed(0)} MiB`)
    expect({ rows, columns }).toEqual({ rows: 5, columns: 30_000 })
    expect(maxRssBytes).toBeLessThan(200 * 2 ** 20)
  })

  it('values cross the first chunk’s doublings and the fixed chunks whole, row by row and column by column', () => {
    const rows = 70_000
    const byRow = new TableBuilder(['a', 'b'], 't.csv', float32Bytes(rows, 2) * 2)
    for (let r = 0; r < rows; r++) byRow.addRow([String(r), r % 5 === 0 ? '' : String(-r)])
    const byColumn = new TableBuilder(['a', 'b'], 't.parquet', float32Bytes(rows, 2) * 2)
    // a columnar reader: each column in runs, the second column shorter (its rows beyond are missing)
    for (let start = 0; start < rows; start += 30_000)
      byColumn.addColumnRun(
        0,
        start,
        Array.from({ length: Math.min(30_000, rows - start) }, (_, i) => start + i),
      )
    byColumn.addColumnRun(1, 0, [7, 8, 9])
    const concat = (chunks: Float32Array[]) => {
      const all = new Float32Array(chunks.reduce((s, c) => s + c.length, 0))
      let at = 0
      for (const c of chunks) {
        all.set(c, at)
        at += c.length
      }
      return all
    }
    const [a, b] = byRow.finish().stored.map((c) => concat(c.chunks))
    for (const r of [0, 15, 16, 17, 1023, 65_535, 65_536, 69_999]) {
      expect(a[r]).toBe(r)
      expect(b[r]).toBe(r % 5 === 0 ? NaN : -r)
    }
    const built = byColumn.finish()
    expect(built.rows).toBe(rows)
    const [ca, cb] = built.stored.map((c) => concat(c.chunks))
    expect([ca[0], ca[29_999], ca[30_000], ca[65_536], ca[69_999]]).toEqual([0, 29_999, 30_000, 65_536, 69_999])
    expect(cb.length).toBeGreaterThanOrEqual(rows)
    expect([cb[0], cb[2], cb[3], cb[69_999]]).toEqual([7, 9, NaN, NaN])
  })
})

describe('numbers beyond float32', () => {
  const refusedWith = async (content: string | Uint8Array, name: string) => {
    const { store, file } = fresh()
    const error = await loadDataFile(file(name, content), store).catch((e: unknown) => e as Error)
    expect(await fs.readdir(join(store, DATASETS_DIR)).catch(() => [])).toEqual([])
    return (error as Error).message
  }

  it('a target of 1e308 (a valid double) is out of float32 range, naming the column and row', async () => {
    expect(await refusedWith('x,y\n1,2\n3,1e308\n', 'big.csv')).toBe(
      'data: big.csv column "y" row 2: 1e308 is out of float32 range (±3.4e38), the precision every engine trains in; rescale that column (e.g. other units) or leave it out of the file',
    )
    expect(await refusedWith('x,y\n1,-1e400\n', 'bigger.csv')).toMatch(/^data: bigger\.csv column "y" row 1: -1e400 is out of float32 range/)
    const parquet = parquetWriteBuffer({ columnData: [{ name: 'd', data: [1, 2, 3.5e38], type: 'DOUBLE' }] })
    expect(await refusedWith(new Uint8Array(parquet), 'big.parquet')).toMatch(/^data: big\.parquet column "d" row 3: 3\.5e\+38 is out of float32 range/)
  })

  it('in a text column it is only text; the word Infinity is text, 3.4e38 is a number', async () => {
    const { store, file } = fresh()
    const info = await loadDataFile(file('ok.csv', 'note,w,edge\n1e308,Infinity,3.4e38\nabc,1,-3.4e38\n'), store)
    expect(info.columns.map((c) => [c.name, c.type, c.firstTextRow])).toEqual([
      ['note', 'text', 2],
      ['w', 'text', 1],
      ['edge', 'numeric', null],
    ])
  })
})

describe.runIf(process.platform !== 'win32')('the data cache is private', () => {
  it('its folders are 0700 and its files 0600, whatever the umask; an older 0755 cache folder is narrowed', async () => {
    const { store, file } = fresh()
    await fs.mkdir(join(store, DATASETS_DIR), { recursive: true, mode: 0o755 })
    await fs.chmod(join(store, DATASETS_DIR), 0o755)
    const previous = process.umask(0o000)
    let sha: string
    try {
      sha = (await loadDataFile(file('t.csv', 'a,y\n1,2\n'), store)).sha256
      // a second load rewrites info.json: still private
      await loadDataFile(file('t.csv', 'a,y\n1,2\n'), store, { name: 'again.csv' })
    } finally {
      process.umask(previous)
    }
    const mode = async (path: string) => (await fs.stat(path)).mode & 0o777
    expect(await mode(join(store, DATASETS_DIR))).toBe(0o700)
    expect(await mode(join(store, DATASETS_DIR, sha))).toBe(0o700)
    expect(await mode(join(store, DATASETS_DIR, sha, 'info.json'))).toBe(0o600)
    expect(await mode(join(store, DATASETS_DIR, sha, 'table.f32'))).toBe(0o600)
    expect((await fs.readdir(join(store, DATASETS_DIR, sha))).sort()).toEqual(['info.json', 'table.f32'])
  })
})

describe.runIf(process.platform !== 'win32')('a FIFO in the data cache blocks nothing', () => {
  it('as info.json the set counts as not cached (loaded again); as table.f32 it is a damaged table', async () => {
    const { store, file } = fresh()
    const csv = file('t.csv', 'a,y\n1,2\n')
    const { sha256 } = await loadDataFile(csv, store)
    const folder = join(store, DATASETS_DIR, sha256)
    await fs.rename(join(folder, 'table.f32'), join(root, 'table-aside.f32'))
    execFileSync('mkfifo', [join(folder, 'table.f32')])
    expect(() => readTableColumns(tablePath(store, sha256), [0])).toThrow(/the cached table .* is damaged \(it is not a regular file\)/)
    expect(await listDataSets(store)).toEqual([])
    await fs.rm(join(folder, 'info.json'))
    execFileSync('mkfifo', [join(folder, 'info.json')])
    expect(await listDataSets(store)).toEqual([])
  })
})

describe('a store that cannot be written', () => {
  it('a set already cached is still served (its info not updated); a new one is refused naming the cache, field store', async () => {
    const { store, file } = fresh()
    const csv = file('t.csv', 'a,y\n1,2\n')
    const first = await loadDataFile(csv, store)
    const readOnly = Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS' })
    const realOpen = fs.open.bind(fs)
    const spy = vi
      .spyOn(fs, 'open')
      .mockImplementation(((path: string, flags?: string | number, mode?: number) =>
        typeof flags === 'string' && flags.startsWith('w') ? Promise.reject(readOnly) : realOpen(path, flags, mode)) as typeof fs.open)
    try {
      const again = await loadDataFile(csv, store, { name: 'renamed.csv' })
      expect(again).toMatchObject({ sha256: first.sha256, name: 'renamed.csv', loadMs: 0 })
      const error = await loadDataFile(file('new.csv', 'b,z\n3,4\n'), store).catch((e: unknown) => e)
      expect(error).toMatchObject({
        code: 'invalid-input',
        message: `the data cache ${join(store, DATASETS_DIR)} cannot be written (EROFS: a read-only file system): the run store must be a folder this user can write`,
        issues: [{ field: 'store' }],
      })
    } finally {
      spy.mockRestore()
    }
    expect((await listDataSets(store)).map((d) => d.name)).toEqual(['t.csv'])
  })
})
