// Browser mode's data-file upload through a real server: a good CSV comes back as the cache's
// DataSetInfo; no token is 401, a foreign Origin or Host 403, a declared or streamed body over the
// cap 413, a body cut off halfway leaves nothing behind (no folder, nothing cached) and the server
// keeps answering; a full disk is answered 507 (mid-stream or once the body is in); uploads are private; concurrent uploads of the same bytes all succeed and are kept once; a bad name
// (checked in bytes) or method is refused naming what is accepted; the .part file of a
// server killed mid-upload is removed at the next start, one still being written is not. The loader is the data
// cache's own.
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { createServer, request } from 'node:http'
import { tmpdir } from 'node:os'
import { Writable } from 'node:stream'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { DataSetInfo } from '@shared/contract'
import { FakeService } from '@shared/testing/fake-service'
import { listDataSets, loadDataFile } from '../data'
import { waitUntil } from '../testing/capability'
import { fakeRendererDir } from '../testing/http'
import { type TrainpoolServer, startServer } from './server'
import { ABANDONED_PART_MS, handleUpload, removeAbandonedUploads } from './upload'

const CSV = 'x1,x2,city,y\n1,2,Lyon,3.5\n2,,Paris,4.5\n3,4,Nantes,5.5\n4,5,Lille,6.5\n'

let store: string
let uploads: string
let loads: string[]
let server: TrainpoolServer

beforeEach(async () => {
  store = mkdtempSync(join(tmpdir(), 'trainpool-upload-test-'))
  uploads = join(store, '.uploads')
  loads = []
  server = await startServer({
    service: new FakeService({ capabilities: { shell: 'browser' } }),
    port: 0,
    rendererDir: fakeRendererDir().dir,
    uploads: {
      dir: uploads,
      maxBytes: 64 * 1024,
      load: (path) => {
        loads.push(path)
        return loadDataFile(path, store)
      },
    },
  })
})

afterEach(() => server.close())

interface Answer {
  status: number
  body: string
}

/** POSTs `body` in chunks (chunked transfer unless a Content-Length is given) and reads the answer. */
function post(path: string, chunks: Buffer[], headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, method: 'POST', headers }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c) => (body += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    // a refusal may close the connection while the rest of the body is still being sent
    req.on('error', (err) => (err.message.includes('EPIPE') || err.message.includes('ECONNRESET') ? undefined : reject(err)))
    for (const c of chunks) req.write(c)
    req.end()
  })
}

const uploadPath = (name: string, token = server.token) => `/api/upload?name=${encodeURIComponent(name)}${token ? `&token=${token}` : ''}`
const leftovers = () => (existsSync(uploads) ? readdirSync(uploads) : [])

describe('POST /api/upload', () => {
  it('streams a CSV to the store, loads it into the cache and answers its DataSetInfo', async () => {
    const r = await post(uploadPath('houses.csv'), [Buffer.from(CSV.slice(0, 20)), Buffer.from(CSV.slice(20))])
    expect(r.status, r.body).toBe(200)
    const info = JSON.parse(r.body) as DataSetInfo
    expect(info).toMatchObject({ name: 'houses.csv', format: 'csv', rows: 4, bytes: Buffer.byteLength(CSV) })
    expect(info.sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(info.columns.map((c) => [c.name, c.type, c.missing])).toEqual([
      ['x1', 'numeric', 0],
      ['x2', 'numeric', 1],
      ['city', 'text', 0],
      ['y', 'numeric', 0],
    ])
    expect(loads).toHaveLength(1)
    expect((await listDataSets(store)).map((d) => d.sha256)).toEqual([info.sha256])
    // kept in the store under its bytes' sha256: the same bytes again take no more room
    expect(leftovers()).toEqual([info.sha256])
    const again = await post(uploadPath('houses.csv'), [Buffer.from(CSV)])
    expect(JSON.parse(again.body)).toMatchObject({ sha256: info.sha256, rows: 4 })
    expect(leftovers()).toEqual([info.sha256])
    expect(readdirSync(join(uploads, info.sha256))).toEqual(['houses.csv'])
  })

  it('takes 4 uploads of the same bytes at once: all 200, one file kept, one data set cached', async () => {
    const answers = await Promise.all(
      [0, 1, 2, 3].map((k) => post(uploadPath('houses.csv'), [Buffer.from(CSV.slice(0, 7 * (k + 1))), Buffer.from(CSV.slice(7 * (k + 1)))])),
    )
    for (const r of answers) expect(r.status, r.body).toBe(200)
    const shas = new Set(answers.map((r) => (JSON.parse(r.body) as DataSetInfo).sha256))
    expect(shas.size).toBe(1)
    const [sha] = shas
    expect(leftovers()).toEqual([sha])
    expect(readdirSync(join(uploads, sha))).toEqual(['houses.csv'])
    expect((await listDataSets(store)).map((d) => d.sha256)).toEqual([sha])
  })

  it('random interleavings of concurrent uploads (fixed seeds): every good file answers 200 and is kept once, a bad one removes only its own name', async () => {
    const files: [string, string][] = [
      ['a.csv', CSV],
      ['b.csv', CSV.replace('3.5', '9.5')],
      ['a-copy.csv', CSV],
      ['bad.csv', ''],
    ]
    for (const seed of [1, 2, 3]) {
      let state = seed
      const rand = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
      const jobs = Array.from({ length: 8 }, () => files[Math.floor(rand() * files.length)])
      const answers = await Promise.all(
        jobs.map(async ([name, text]) => {
          const cut = Math.floor(rand() * text.length)
          await new Promise((r) => setTimeout(r, Math.floor(rand() * 5)))
          return { name, r: await post(uploadPath(name), [Buffer.from(text.slice(0, cut)), Buffer.from(text.slice(cut))]) }
        }),
      )
      for (const { name, r } of answers) expect(r.status, `seed ${seed}: ${name} ${r.body}`).toBe(name === 'bad.csv' ? 400 : 200)
      // every good file is there under its bytes' folder, once; the bad one left nothing
      for (const [name, text] of files.filter(([n]) => n !== 'bad.csv' && jobs.some(([j]) => j === n))) {
        const sha = answers.find((a) => a.name === name)!.r.body.match(/"sha256":"([0-9a-f]{64})"/)![1]
        expect(readdirSync(join(uploads, sha)), `seed ${seed}`).toContain(name)
        expect(statSync(join(uploads, sha, name)).size).toBe(Buffer.byteLength(text))
      }
      expect(leftovers().filter((n) => n.endsWith('.part'))).toEqual([])
    }
  })

  it('checks the name in bytes: 200 "é" (400 bytes) is refused with 400 naming the field, nothing left behind', async () => {
    const r = await post(uploadPath(`${'é'.repeat(200)}.csv`), [Buffer.from(CSV)])
    expect(r.status).toBe(400)
    expect(JSON.parse(r.body)).toMatchObject({ error: { code: 'invalid-input', issues: [{ field: 'name' }] } })
    expect(r.body).toMatch(/at most 255 bytes in UTF-8 \(got 404 bytes, 204 characters\)/)
    expect(leftovers()).toEqual([])
  })

  it('bounds an upload by its silence, not its length: a slow upload that keeps moving succeeds, a stalled one gets 408 and leaves nothing', async () => {
    const slowServer = await startServer({
      service: new FakeService({ capabilities: { shell: 'browser' } }),
      port: 0,
      rendererDir: fakeRendererDir().dir,
      uploads: { dir: uploads, idleTimeoutMs: 300, load: (path) => loadDataFile(path, store) },
    })
    const send = (name: string, pauses: number[]) =>
      new Promise<Answer>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: slowServer.port, path: `/api/upload?name=${name}&token=${slowServer.token}`, method: 'POST' }, (res) => {
          let body = ''
          res.setEncoding('utf8')
          res.on('data', (c) => (body += c))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
        })
        req.on('error', (err) => (/EPIPE|ECONNRESET/.test(err.message) ? undefined : reject(err)))
        const bytes = Buffer.from(CSV)
        const step = Math.ceil(bytes.length / pauses.length)
        void (async () => {
          for (const [k, pause] of pauses.entries()) {
            if (req.destroyed) return
            req.write(bytes.subarray(k * step, (k + 1) * step))
            await new Promise((r) => setTimeout(r, pause))
          }
          if (!req.destroyed) req.end()
        })()
      })
    try {
      // 8 pauses of 150 ms: 1.2 s in all, four times the idle limit, never 300 ms silent
      const slow = await send('slow.csv', Array(8).fill(150))
      expect(slow.status, slow.body).toBe(200)
      expect(JSON.parse(slow.body)).toMatchObject({ name: 'slow.csv', rows: 4 })
      const stalled = await send('stalled.csv', [1000, 0])
      expect(stalled.status).toBe(408)
      expect(JSON.parse(stalled.body).error.message).toMatch(/the upload stalled: no bytes for 0\.3 s \(trainpool serve --upload-idle-timeout/)
      // answered first, then its partial file removed
      expect(await waitUntil(() => leftovers().every((n) => !n.endsWith('.part')), 5000)).toBe(true)
    } finally {
      await slowServer.close()
    }
  })

  it('refuses an upload without the token (401): nothing read, nothing stored', async () => {
    const r = await post(uploadPath('houses.csv', ''), [Buffer.from(CSV)])
    expect(r.status).toBe(401)
    const wrong = await post(`/api/upload?name=houses.csv&token=${'0'.repeat(48)}`, [Buffer.from(CSV)])
    expect(wrong.status).toBe(401)
    expect(leftovers()).toEqual([])
    expect(loads).toEqual([])
  })

  it('refuses an upload from a foreign page (Origin) or under a foreign Host name (403), even with the token', async () => {
    const foreign = await post(uploadPath('houses.csv'), [Buffer.from(CSV)], { Origin: 'http://evil.example' })
    expect(foreign.status).toBe(403)
    const rebound = await post(uploadPath('houses.csv'), [Buffer.from(CSV)], { Host: `evil.example:${server.port}` })
    expect(rebound.status).toBe(403)
    expect(leftovers()).toEqual([])
    expect(loads).toEqual([])
  })

  it('refuses a body over the cap by its Content-Length (413) before reading it', async () => {
    const big = Buffer.alloc(64 * 1024 + 1, 0x31)
    const r = await post(uploadPath('big.csv'), [big], { 'Content-Length': String(big.length) })
    expect(r.status).toBe(413)
    expect(JSON.parse(r.body).error.message).toMatch(/over this server's upload limit of 64\.0 KiB \(65536 bytes; trainpool serve --max-upload/)
    expect(leftovers()).toEqual([])
    expect(loads).toEqual([])
  })

  it('refuses a body that grows over the cap while streaming (no Content-Length): 413, the partial file removed', async () => {
    const chunk = Buffer.alloc(16 * 1024, 0x31)
    const r = await post(uploadPath('big.csv'), [chunk, chunk, chunk, chunk, chunk, chunk])
    expect(r.status).toBe(413)
    expect(leftovers()).toEqual([])
    expect(loads).toEqual([])
  })

  it('cleans up an upload cut off halfway: its folder removed, nothing loaded or cached, the server still fine', async () => {
    const req = request({
      host: '127.0.0.1',
      port: server.port,
      path: uploadPath('cut.csv'),
      method: 'POST',
      headers: { 'Content-Length': String(Buffer.byteLength(CSV) * 2) },
    })
    req.on('error', () => {})
    req.write(CSV)
    // the first half has arrived on the server's disk …
    const arrived = () => leftovers().filter((f) => f.endsWith('.part') && statSync(join(uploads, f)).size > 0)
    expect(await waitUntil(() => arrived().length === 1, 10_000)).toBe(true)
    // … then the client goes away
    req.destroy()
    expect(await waitUntil(() => leftovers().length === 0, 10_000)).toBe(true)
    expect(loads).toEqual([])
    expect(await listDataSets(store)).toEqual([])
    const after = await post(uploadPath('houses.csv'), [Buffer.from(CSV)])
    expect(after.status).toBe(200)
  })

  it('answers 507 when the disk fills while the body streams, keeping nothing; the server still fine', async () => {
    await server.close()
    let written = 0
    const fullDisk = (path: string) =>
      new Writable({
        write(chunk: Buffer, _enc, done) {
          written += chunk.length
          if (written <= 1024) return (void appendFileSync(path, chunk), done())
          done(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }))
        },
      })
    server = await startServer({
      service: new FakeService({ capabilities: { shell: 'browser' } }),
      port: 0,
      rendererDir: fakeRendererDir().dir,
      uploads: { dir: uploads, maxBytes: 1024 * 1024, openArriving: fullDisk, load: (path) => loadDataFile(path, store) },
    })
    const row = Buffer.from('1,2,Lyon,3.5\n'.repeat(400))
    const r = await post(uploadPath('big.csv'), [Buffer.from('x1,x2,city,y\n'), ...Array.from({ length: 40 }, () => row)])
    expect(r.status).toBe(507)
    expect(JSON.parse(r.body).error.message).toMatch(/disk is full/)
    expect(written).toBeGreaterThan(1024)
    expect(leftovers()).toEqual([])
    expect(await listDataSets(store)).toEqual([])
    // the next upload, on a disk with room again, is stored
    written = -Infinity
    expect((await post(uploadPath('houses.csv'), [Buffer.from(CSV)])).status).toBe(200)
  })

  it('answers 507 when the disk is full once the whole body has arrived (a small file), keeping nothing', async () => {
    await server.close()
    // the write fails after the body is in: the request is complete (and, read to its end, destroyed)
    const fullDisk = () =>
      new Writable({
        write(_chunk: Buffer, _enc, done) {
          setTimeout(() => done(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })), 50)
        },
      })
    server = await startServer({
      service: new FakeService({ capabilities: { shell: 'browser' } }),
      port: 0,
      rendererDir: fakeRendererDir().dir,
      uploads: { dir: uploads, openArriving: fullDisk, load: (path) => loadDataFile(path, store) },
    })
    const r = await post(uploadPath('houses.csv'), [Buffer.from(CSV)], { 'Content-Length': String(Buffer.byteLength(CSV)) })
    expect(r.status, r.body).toBe(507)
    expect(JSON.parse(r.body)).toMatchObject({
      error: { code: 'internal', message: expect.stringMatching(/could not store the upload \(the disk is full\): ENOSPC/) },
    })
    expect(leftovers()).toEqual([])
    expect(await listDataSets(store)).toEqual([])
  })

  it('takes a re-upload of stored bytes on a nearly full disk: 200 with the same data set, nothing written; a new file still gets 507 and leaves nothing', async () => {
    await server.close()
    // a disk with `room` bytes left for arriving uploads: a write past it fails as a full disk does
    let room = Infinity
    let written = 0
    const nearlyFull = (path: string) =>
      new Writable({
        write(chunk: Buffer, _enc, done) {
          if (written + chunk.length > room) return done(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }))
          written += chunk.length
          appendFileSync(path, chunk)
          done()
        },
      })
    server = await startServer({
      service: new FakeService({ capabilities: { shell: 'browser' } }),
      port: 0,
      rendererDir: fakeRendererDir().dir,
      uploads: { dir: uploads, maxBytes: 1024 * 1024, openArriving: nearlyFull, load: (path) => loadDataFile(path, store) },
    })
    const big = Buffer.from(`x1,x2,city,y\n${'1,2,Lyon,3.5\n'.repeat(2000)}`)
    const halves = [big.subarray(0, 10_000), big.subarray(10_000)]
    const sized = (body: Buffer) => ({ 'Content-Length': String(body.length) })
    const first = await post(uploadPath('big.csv'), halves, sized(big))
    expect(first.status, first.body).toBe(200)
    const { sha256 } = JSON.parse(first.body) as DataSetInfo
    expect(written).toBe(big.length)

    // the disk fills: less room than the file takes
    room = written + 1024
    const again = await post(uploadPath('big.csv'), halves, sized(big))
    expect(again.status, again.body).toBe(200)
    expect(JSON.parse(again.body)).toMatchObject({ sha256, rows: 2000 })
    // under another name: a second name for the stored bytes, still nothing written
    const renamed = await post(uploadPath('copy.csv'), [big], sized(big))
    expect(renamed.status, renamed.body).toBe(200)
    expect(JSON.parse(renamed.body)).toMatchObject({ sha256, name: 'copy.csv' })
    expect(written).toBe(big.length)
    expect(leftovers()).toEqual([sha256])
    expect(readdirSync(join(uploads, sha256)).sort()).toEqual(['big.csv', 'copy.csv'])

    // the same size but one byte different: the matched prefix is copied, the disk fills, 507, nothing partial left
    const other = Buffer.from(big)
    other[other.length - 2] = '7'.charCodeAt(0)
    const refused = await post(uploadPath('other.csv'), [other.subarray(0, 10_000), other.subarray(10_000)], sized(other))
    expect(refused.status, refused.body).toBe(507)
    expect(JSON.parse(refused.body).error.message).toMatch(/disk is full/)
    expect(leftovers()).toEqual([sha256])
    expect(readdirSync(join(uploads, sha256)).sort()).toEqual(['big.csv', 'copy.csv'])
    expect((await listDataSets(store)).map((d) => d.sha256)).toEqual([sha256])

    // with room again, that file is stored whole: the copied prefix and the rest
    room = Infinity
    const stored = await post(uploadPath('other.csv'), [other.subarray(0, 10_000), other.subarray(10_000)], sized(other))
    expect(stored.status, stored.body).toBe(200)
    const otherSha = (JSON.parse(stored.body) as DataSetInfo).sha256
    expect(otherSha).not.toBe(sha256)
    expect(readFileSync(join(uploads, otherSha, 'other.csv')).equals(other)).toBe(true)
  })

  it.runIf(process.platform !== 'win32')('keeps an upload private whatever the umask: its folders 0700, its file 0600', async () => {
    const previous = process.umask(0o000)
    try {
      const r = await post(uploadPath('houses.csv'), [Buffer.from(CSV)])
      expect(r.status, r.body).toBe(200)
      const { sha256 } = JSON.parse(r.body) as DataSetInfo
      const mode = (path: string) => statSync(path).mode & 0o777
      expect(mode(uploads)).toBe(0o700)
      expect(mode(join(uploads, sha256))).toBe(0o700)
      expect(mode(join(uploads, sha256, 'houses.csv'))).toBe(0o600)
    } finally {
      process.umask(previous)
    }
  })

  it("removes a server-killed upload's .part file at the next start, not one still being written", async () => {
    await server.close()
    mkdirSync(uploads, { recursive: true })
    const abandoned = join(uploads, 'abandoned.part')
    const writing = join(uploads, 'writing.part')
    const kept = join(uploads, 'kept.csv.txt')
    for (const f of [abandoned, writing, kept]) writeFileSync(f, 'x,y\n1,2\n')
    const old = (Date.now() - ABANDONED_PART_MS - 60_000) / 1000
    utimesSync(abandoned, old, old)
    utimesSync(kept, old, old)
    expect(await removeAbandonedUploads(uploads)).toEqual(['abandoned.part'])
    utimesSync(writing, old, old)
    server = await startServer({
      service: new FakeService({ capabilities: { shell: 'browser' } }),
      port: 0,
      rendererDir: fakeRendererDir().dir,
      uploads: { dir: uploads, load: (path) => loadDataFile(path, store) },
    })
    expect(leftovers().sort()).toEqual(['kept.csv.txt'])
    expect(await removeAbandonedUploads(join(store, 'nowhere'))).toEqual([])
  })

  it('refuses a name that is not a plain .csv/.tsv/.parquet file name, and any method but POST', async () => {
    for (const name of ['', 'notes.txt', '../x.csv', 'a/b.csv']) {
      const r = await post(uploadPath(name), [Buffer.from(CSV)])
      expect(r.status, name).toBe(400)
      expect(JSON.parse(r.body).error.message, name).toMatch(/^name: /)
    }
    const get = await new Promise<number>((resolve, reject) => {
      request({ host: '127.0.0.1', port: server.port, path: uploadPath('houses.csv') }, (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
        .on('error', reject)
        .end()
    })
    expect(get).toBe(405)
    expect(leftovers()).toEqual([])
  })

  it('answers a file the cache cannot read with its reason (400), keeping nothing', async () => {
    const r = await post(uploadPath('empty.csv'), [Buffer.from('')])
    expect(r.status).toBe(400)
    expect(JSON.parse(r.body).error.message.length).toBeGreaterThan(0)
    expect(leftovers()).toEqual([])
  })

  it('a server without a run store answers an upload 503, saying uploads are off', async () => {
    const bare = createServer((req, res) => void handleUpload(req, res, new URL(req.url ?? '/', 'http://localhost'), undefined))
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve))
    const port = (bare.address() as { port: number }).port
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const r = request({ host: '127.0.0.1', port, method: 'POST', path: '/api/upload?name=a.csv' }, (res) => {
        let body = ''
        res.on('data', (c) => (body += c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      })
      r.on('error', reject)
      r.end('x,y\n1,2\n')
    })
    await new Promise((resolve) => bare.close(resolve))
    expect(answer.status).toBe(503)
    expect(JSON.parse(answer.body).error.message).toMatch(/uploads are off/)
  })
})
