// Stores generated with fast-check (fixed seeds, fixed run counts): random names, and entries of
// every kind a run store can be handed — runs, files, folders, FIFOs, links into the store, out of
// it and looping, huge sparse files, invalid JSON, JSON that is no run object — at random sizes.
// Listing always finishes quickly, lists every entry named like a run (a run, or damaged with its
// reason: never dropped) and nothing else; reading each one and the start-up check finish too.
import { execFileSync } from 'node:child_process'
import { promises as fs } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUN_ID_PATTERN } from '@shared/contract'
import { fakeRun } from '../testing/run-fixtures'
import { MAX_RUN_FILE_BYTES, RUN_FILE, RunStore } from './run-store'

const SEED = 26_2026
const NUM_RUNS = 40
/** a list of a store of up to a dozen entries, cold, takes milliseconds: this is a hang, not noise */
const LIST_WITHIN_MS = 3_000

const KINDS = [
  'run',
  'running-run',
  'folder-as-run-file',
  'fifo-as-run-file',
  'fifo-entry',
  'plain-file-entry',
  'link-into-store',
  'link-out-of-store',
  'link-to-dev-zero',
  'link-loop',
  'folder-link-out',
  'folder-link-loop',
  'huge-sparse',
  'invalid-json',
  'random-bytes',
  'null',
  'array',
  'number',
  'no-run-file-yet',
] as const
type Kind = (typeof KINDS)[number]
/** kinds whose folder holds no run.json: not a run yet (a save in progress), not listed */
const NOT_LISTED: readonly Kind[] = ['no-run-file-yet']
const VALID: readonly Kind[] = ['run', 'running-run']

let root: string
let outsideFile: string
let storeCount = 0
beforeAll(async () => {
  root = await fs.mkdtemp(join(os.tmpdir(), 'trainpool-store-fuzz-'))
  outsideFile = join(root, 'outside.json')
  await fs.writeFile(outsideFile, JSON.stringify(fakeRun({}, 'outside')))
})
afterAll(() => fs.rm(root, { recursive: true, force: true }))

const entry = fc.record({
  name: fc.stringMatching(/^[A-Za-z0-9_-]{1,24}$/),
  kind: fc.constantFrom(...KINDS),
  // bytes of garbage, or how far over the cap a sparse file is
  size: fc.integer({ min: 0, max: 200_000 }),
  sparse: fc.constantFrom(MAX_RUN_FILE_BYTES + 1, 700 * 2 ** 20, 5 * 2 ** 30),
  bytes: fc.uint8Array({ minLength: 0, maxLength: 64 }),
})
type Generated = { kind: Kind; size: number; sparse: number; bytes: Uint8Array }
/** names the store must ignore: they cannot be run ids ('.' is its own folders, .datasets and .uploads) */
const stray = fc.stringMatching(/^\.?[A-Za-z0-9_-]{0,10}\.[a-z]{1,4}$/)

async function make(dir: string, name: string, e: Generated): Promise<void> {
  const folder = join(dir, name)
  const runFile = join(folder, RUN_FILE)
  const inFolder = async () => fs.mkdir(folder)
  switch (e.kind) {
    case 'run':
    case 'running-run': {
      await inFolder()
      // random sizes: padded names
      const run = {
        ...fakeRun({}, name),
        status: e.kind === 'run' ? ('ok' as const) : ('running' as const),
        name: 'x'.repeat(Math.min(e.size, 120)) || undefined,
      }
      return fs.writeFile(runFile, JSON.stringify(run))
    }
    case 'folder-as-run-file':
      await inFolder()
      return fs.mkdir(runFile)
    case 'fifo-as-run-file':
      await inFolder()
      execFileSync('mkfifo', [runFile])
      return
    case 'fifo-entry':
      execFileSync('mkfifo', [folder])
      return
    case 'plain-file-entry':
      return fs.writeFile(folder, Buffer.from(e.bytes))
    case 'link-into-store':
      await inFolder()
      return fs.symlink(join(dir, 'anchor-run', RUN_FILE), runFile)
    case 'link-out-of-store':
      await inFolder()
      return fs.symlink(outsideFile, runFile)
    case 'link-to-dev-zero':
      await inFolder()
      return fs.symlink('/dev/zero', runFile)
    case 'link-loop':
      await inFolder()
      return fs.symlink(RUN_FILE, runFile)
    case 'folder-link-out':
      return fs.symlink(root, folder)
    case 'folder-link-loop':
      return fs.symlink(folder, folder)
    case 'huge-sparse': {
      await inFolder()
      const handle = await fs.open(runFile, 'w')
      await handle.truncate(e.sparse)
      return handle.close()
    }
    case 'invalid-json':
      await inFolder()
      return fs.writeFile(runFile, `{"schemaVersion": 2, "runId": ${'['.repeat(e.size % 5000)}`)
    case 'random-bytes':
      await inFolder()
      return fs.writeFile(runFile, Buffer.from(e.bytes))
    case 'null':
    case 'array':
    case 'number':
      await inFolder()
      return fs.writeFile(runFile, e.kind === 'null' ? 'null' : e.kind === 'array' ? '[]' : String(e.size))
    case 'no-run-file-yet':
      await inFolder()
      return fs.writeFile(join(folder, `.${RUN_FILE}.1.abcd.tmp`), '{"half"')
  }
}

async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms)))
  try {
    return await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}

describe.runIf(process.platform !== 'win32')('store fuzz', () => {
  it(`${NUM_RUNS} random stores: every entry named like a run is listed (a run or damaged), quickly; nothing blocks`, async () => {
    let entries = 0
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(entry, { minLength: 1, maxLength: 12, selector: (e) => e.name.toLowerCase() }),
        fc.uniqueArray(stray, { maxLength: 3 }),
        async (generated, strays) => {
          const dir = join(root, `store-${storeCount++}`)
          await fs.mkdir(dir)
          // the run that links into the store point at
          await new RunStore(dir).save(fakeRun({}, 'anchor-run'))
          const made = generated.filter((e) => e.name !== 'anchor-run')
          for (const e of made) await make(dir, e.name, e)
          for (const s of strays) await fs.writeFile(join(dir, s), 'stray').catch(() => undefined)
          entries += made.length

          const store = new RunStore(dir)
          const list = await within(LIST_WITHIN_MS, 'list', store.list())
          const listed = new Map(list.map((e) => [e.runId, e]))
          const expected = ['anchor-run', ...made.filter((e) => !NOT_LISTED.includes(e.kind)).map((e) => e.name)].sort()
          expect([...listed.keys()].sort()).toEqual(expected)
          for (const e of made) {
            const got = listed.get(e.name)
            if (NOT_LISTED.includes(e.kind)) continue
            if (VALID.includes(e.kind)) expect(got?.status, `${e.kind} ${e.name}`).toBe(e.kind === 'run' ? 'ok' : 'running')
            else {
              expect(got?.status, `${e.kind} ${e.name}`).toBe('damaged')
              expect(got?.problem, `${e.kind} ${e.name}`).toMatch(new RegExp(`^run ${e.name}: .+`))
            }
          }
          for (const runId of listed.keys()) {
            await within(
              LIST_WITHIN_MS,
              `get ${runId}`,
              store.get(runId).catch(() => null),
            )
          }
          // the start-up check: marks the running runs (no writer) interrupted, never blocks
          const marked = await within(LIST_WITHIN_MS, 'the start-up check', new RunStore(dir).markInterrupted())
          expect(marked.sort()).toEqual(
            made
              .filter((e) => e.kind === 'running-run')
              .map((e) => e.name)
              .sort(),
          )
          expect([...listed.keys()].every((id) => RUN_ID_PATTERN.test(id))).toBe(true)
          await fs.rm(dir, { recursive: true, force: true })
        },
      ),
      { seed: SEED, numRuns: NUM_RUNS },
    )
    console.log(`[store fuzz] ${NUM_RUNS} stores, ${entries} entries of ${KINDS.length} kinds: each listed as a run or damaged, nothing blocked`)
  })
})
