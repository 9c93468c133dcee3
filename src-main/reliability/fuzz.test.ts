// Malformed input, generated with fast-check (fixed seeds, fixed run counts): at the real
// BenchService through dispatch() (the path Electron's ipcMain handlers use) and through the
// browser-mode WebSocket server (a real `ws` client with the token), and at the CLI's flag parser
// (+ a few real `trainpool bench` processes). Every payload gets a typed error envelope, nothing
// starts, the store is unchanged, Object.prototype is untouched, and valid calls still work after.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { ERROR_CODES, LIMITS, type TrainpoolErrorShape } from '@shared/contract'
import { mlpFamily } from '@shared/families'
import { WS_MAX_MESSAGE_BYTES } from '@shared/contract/websocket'
import { UsageError, configFromFlags, type BenchFlags } from '../cli/options'
import { type TrainpoolServer, startServer } from '../server/server'
import { fakeRendererDir, openWs } from '../testing/http'
import { dispatch } from '../service/dispatch'
import { RUN_FILE } from '../store/run-store'
import { fakeRun } from '../testing/run-fixtures'
import { badRequest, prototypeSnapshot } from '@shared/testing/bad-requests'
import { makeService } from '../testing/service-harness'

const SEED = 7_2024
const NUM_RUNS = 250
const counts = { dispatch: 0, websocket: 0, wsRaw: 0, cliFlags: 0, cliProcesses: 0 }
afterAll(() => {
  const total = counts.dispatch + counts.websocket + counts.wsRaw
  console.log(
    `[reliability] fuzzed payloads: ${counts.dispatch} via dispatch() (IPC path), ${counts.websocket + counts.wsRaw} via WebSocket ` +
      `(${counts.wsRaw} raw frames), ${total} in all; CLI: ${counts.cliFlags} flag sets through configFromFlags, ${counts.cliProcesses} processes`,
  )
})

const s = makeService()
const stored = fakeRun({}, '20250101-000000-abcdef')
let storedBytes = ''
const proto = prototypeSnapshot()

beforeAll(async () => {
  await s.store!.save(stored)
  storedBytes = readFileSync(join(s.store!.dir, stored.runId, RUN_FILE), 'utf8')
})

function expectTypedError(reply: unknown, what: string): TrainpoolErrorShape {
  expect(reply, what).toMatchObject({ ok: false })
  const error = (reply as { error: TrainpoolErrorShape }).error
  expect(ERROR_CODES, what).toContain(error.code)
  expect(error.code, `${what}: ${error.message}`).toBe('invalid-input')
  expect(typeof error.message, what).toBe('string')
  expect(error.message.length, what).toBeGreaterThan(0)
  return error
}

/** one request, its reply (pushed events skipped); removes its listeners (the shared helper keeps them) */
function roundTrip(ws: WebSocket, frame: string | Buffer, binary = false): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const onMessage = (data: WebSocket.RawData) => {
      const msg = JSON.parse(data.toString()) as Record<string, unknown>
      if ('event' in msg) return
      done()
      resolve(msg)
    }
    const onClose = (code: number) => {
      done()
      reject(new Error(`socket closed (${code}) before a reply`))
    }
    const done = () => {
      ws.off('message', onMessage)
      ws.off('close', onClose)
    }
    ws.on('message', onMessage)
    ws.once('close', onClose)
    ws.send(frame, { binary })
  })
}

async function expectStateUnchanged(): Promise<void> {
  expect(s.launcher.launched).toHaveLength(0) // no worker was ever started
  expect(await s.service.currentRun()).toBeNull()
  expect((await s.service.listRuns()).map((r) => r.runId)).toEqual([stored.runId])
  expect(readFileSync(join(s.store!.dir, stored.runId, RUN_FILE), 'utf8')).toBe(storedBytes)
  expect(prototypeSnapshot()).toBe(proto)
}

describe('dispatch() — the IPC request path', () => {
  it(`${NUM_RUNS} generated malformed requests each get a typed invalid-input envelope; nothing changes`, async () => {
    await fc.assert(
      fc.asyncProperty(badRequest, async (req) => {
        counts.dispatch++
        const reply = await dispatch(s.service, req.method, req.payload)
        expectTypedError(reply, req.what)
        expect(prototypeSnapshot(), req.what).toBe(proto)
      }),
      { seed: SEED, numRuns: NUM_RUNS },
    )
    await expectStateUnchanged()
    // the service still answers valid calls
    expect(await dispatch(s.service, 'capabilities', undefined)).toMatchObject({ ok: true, value: { shell: 'cli' } })
    expect(await dispatch(s.service, 'listRuns', undefined)).toMatchObject({ ok: true, value: [{ runId: stored.runId }] })
    expect(await dispatch(s.service, 'getRun', { runId: stored.runId })).toMatchObject({ ok: true, value: { runId: stored.runId } })
  })
})

describe('the WebSocket server', () => {
  let server: TrainpoolServer
  let ws: WebSocket
  beforeAll(async () => {
    server = await startServer({ service: s.service, port: 0, rendererDir: fakeRendererDir().dir, shutdownService: false })
    const o = await openWs(`${server.wsUrl}?token=${server.token}`)
    if (o.kind !== 'open') throw new Error(`socket not open: ${JSON.stringify(o)}`)
    ws = o.ws
  })
  afterAll(async () => {
    ws?.terminate()
    await server?.close()
  })

  it(`${NUM_RUNS} generated malformed requests over the wire each get {id, ok:false, error}; the server keeps serving`, async () => {
    let id = 0
    await fc.assert(
      fc.asyncProperty(badRequest, async (req) => {
        counts.websocket++
        const frame = JSON.stringify({ id: ++id, method: req.method, payload: req.payload }) // NaN/Infinity → null here
        if (Buffer.byteLength(frame) > WS_MAX_MESSAGE_BYTES) {
          expectTypedError(await roundTrip(ws, frame), `${req.what} (oversized)`)
          return
        }
        const reply = await roundTrip(ws, frame)
        expect(reply.id, req.what).toBe(id)
        expectTypedError(reply, req.what)
      }),
      { seed: SEED + 1, numRuns: NUM_RUNS },
    )
    await expectStateUnchanged()
  })

  it('raw frames: malformed JSON, wrong shapes, bad ids, pollution keys, oversized and binary frames', async () => {
    const frames = fc.sample(
      fc.oneof(
        fc.string({ maxLength: 40 }).filter((t) => {
          try {
            const v = JSON.parse(t) as unknown
            return v === null || typeof v !== 'object' || Array.isArray(v)
          } catch {
            return true
          }
        }),
        fc.constantFrom(
          '{"id":1,"method":"listRuns","__proto__":{"polluted":true}}',
          '{"id":2,"method":"getRun","payload":{"runId":"x","constructor":{"prototype":{"polluted":true}}}}',
          '{"id":{"a":1},"method":"listRuns"}',
          '{"id":null,"method":"listRuns"}',
          `{"id":"${'i'.repeat(65)}","method":"listRuns"}`,
          '{"id":1e999,"method":"listRuns"}',
          '{"id":3,"method":"start","payload":{"config":{"sizes":[1e999],"models":[-0]}}}',
          '{"id":4,"method":["getRun"],"payload":{"runId":"a"}}',
          '{"id":5,"method":"getRun","payload":{"runId":"..\\u0000"}}',
          '{"id":6}',
          '{',
          '',
          '\u0000',
        ),
      ),
      { seed: SEED + 2, numRuns: 60 },
    )
    for (const frame of frames) {
      counts.wsRaw++
      expectTypedError(await roundTrip(ws, frame), `frame ${JSON.stringify(frame)}`)
    }
    for (const big of [
      JSON.stringify({ id: 1, method: 'start', payload: { config: { sizes: new Array(WS_MAX_MESSAGE_BYTES / 2).fill(1) } } }),
      JSON.stringify({ id: 2, method: 'renameRun', payload: { runId: stored.runId, name: 'n'.repeat(WS_MAX_MESSAGE_BYTES + 1) } }),
    ]) {
      counts.wsRaw++
      const r = expectTypedError(await roundTrip(ws, big), 'oversized')
      expect(r.message).toMatch(/limit/)
    }
    counts.wsRaw++
    expectTypedError(await roundTrip(ws, Buffer.from('{"id":1,"method":"listRuns"}'), true), 'binary frame')
    await expectStateUnchanged()
    // still serving, on this socket and a fresh one
    expect(await roundTrip(ws, JSON.stringify({ id: 'after', method: 'listRuns' }))).toMatchObject({ id: 'after', ok: true, value: [{ runId: stored.runId }] })
    const o = await openWs(`${server.wsUrl}?token=${server.token}`)
    expect(o.kind).toBe('open')
    if (o.kind === 'open') {
      expect(await roundTrip(o.ws, JSON.stringify({ id: 1, method: 'capabilities' }))).toMatchObject({
        id: 1,
        ok: true,
        value: { backends: expect.any(Array) },
      })
      o.ws.terminate()
    }
  })
})

/** the MLP family's field ranges, from its field specs */
const MLP = Object.fromEntries(mlpFamily.fields.map((f) => [f.key, f.range])) as Record<'hidden' | 'epochs' | 'batchSize', { min: number; max: number }>

describe('CLI flags', () => {
  const intFlags = {
    models: LIMITS.models,
    workers: LIMITS.workers,
    sizes: LIMITS.size,
    hidden: MLP.hidden,
    epochs: MLP.epochs,
    batchSize: MLP.batchSize,
    repeats: LIMITS.repeats,
    seed: LIMITS.seed,
    features: LIMITS.features,
  } as const
  const flagName: Record<string, string> = {
    models: '--models',
    workers: '--workers',
    sizes: '--sizes',
    hidden: '--hidden',
    epochs: '--epochs',
    batchSize: '--batch-size',
    repeats: '--repeats',
    seed: '--seed',
    features: '--features',
    lr: '--lr',
    testSplit: '--test-split',
    backend: '--backend',
    strategies: '--strategies',
    target: '--target',
    onFailure: '--on-failure',
    preset: '--preset',
  }
  const garbage = fc.stringMatching(/^[a-zA-Z!@#$%^&*() .\-+_]{0,12}$/)
  const notIn = (accepted: readonly string[]) =>
    fc.string({ maxLength: 15 }).filter((t) => !accepted.includes(t.trim()) && !t.split(',').every((p) => accepted.includes(p.trim())))
  const badFlag: fc.Arbitrary<[keyof BenchFlags, string]> = fc.oneof(
    fc.tuple(
      fc.constantFrom(...(Object.keys(intFlags) as (keyof typeof intFlags)[])),
      fc.oneof(
        garbage.filter((t) => !/\d/.test(t)),
        fc.constantFrom('NaN', 'Infinity', '-Infinity', '1e999', '1.5', '0x10', '', ' ', '--', '1,,2', '1;2'),
        fc
          .double({ min: 0.001, max: 1000, noNaN: true })
          .filter((v) => !Number.isInteger(v))
          .map(String),
      ),
    ),
    fc
      .constantFrom(...(Object.keys(intFlags) as (keyof typeof intFlags)[]))
      .chain((f) =>
        fc.tuple(
          fc.constant(f),
          fc.oneof(fc.integer({ min: intFlags[f].max + 1, max: intFlags[f].max * 10 + 10 }), fc.integer({ min: -1e6, max: intFlags[f].min - 1 })).map(String),
        ),
      ),
    fc.tuple(
      fc.constantFrom('lr' as const, 'testSplit' as const),
      fc.oneof(
        garbage.filter((t) => !/\d/.test(t)),
        fc.constantFrom('NaN', 'Infinity', '-1', '0', '2', '1e-9', ''),
      ),
    ),
    fc.tuple(fc.constant('backend' as const), notIn(['auto', 'tensorflow', 'webgpu', 'wasm', 'cpu'])),
    fc.tuple(fc.constant('strategies' as const), notIn(['sequential', 'pool', 'batched'])),
    fc.tuple(fc.constant('target' as const), notIn(['teacher', 'noise'])),
    fc.tuple(fc.constant('onFailure' as const), notIn(['stop', 'continue'])),
    fc.tuple(fc.constant('preset' as const), notIn(['smoke', 'quick', 'article'])),
  )

  it(`${NUM_RUNS} generated bad flag values each throw a UsageError naming the flag`, () => {
    fc.assert(
      fc.property(badFlag, ([flag, value]) => {
        counts.cliFlags++
        const flags: BenchFlags = flag === 'preset' ? { preset: value } : { preset: 'smoke', [flag]: value }
        let err: unknown
        try {
          configFromFlags(flags)
        } catch (e) {
          err = e
        }
        expect(err, `${flag}=${JSON.stringify(value)} was accepted`).toBeInstanceOf(UsageError)
        expect((err as Error).message, `${flag}=${JSON.stringify(value)}`).toContain(flagName[flag])
      }),
      { seed: SEED + 3, numRuns: NUM_RUNS },
    )
  })

  it('real `trainpool bench` processes exit 2 on bad flags, naming the flag, printing no table', async () => {
    const cli = resolve(__dirname, '..', 'cli', 'index.ts')
    const cases: [string[], RegExp][] = [
      [['--sizes', '-5'], /--sizes/],
      [['--epochs', '1e999'], /--epochs/],
      [['--strategies', 'turbo'], /--strategies/],
      [['--test-split', '0.9'], /--test-split/],
    ]
    const results = await Promise.all(
      cases.map(
        ([args]) =>
          new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
            const child = spawn(process.execPath, ['--import', 'tsx', cli, 'bench', '--preset', 'smoke', '--no-save', ...args], {
              stdio: ['ignore', 'pipe', 'pipe'],
            })
            let stdout = ''
            let stderr = ''
            child.stdout.on('data', (c) => (stdout += c))
            child.stderr.on('data', (c) => (stderr += c))
            child.on('exit', (code) => done({ code, stdout, stderr }))
          }),
      ),
    )
    results.forEach((r, i) => {
      counts.cliProcesses++
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toMatch(cases[i][1])
      expect(r.stdout).toBe('')
    })
  })
})
