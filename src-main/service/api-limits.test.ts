// A run's name, tags and id have one set of limits (contract RUN_LIMITS, RUN_ID_PATTERN): the API
// refuses what the store would refuse, with an error naming the field and what is accepted, and
// accepts everything the store accepts.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { API, RUN_LIMITS } from '@shared/contract'
import { RunStore, cleanName, cleanTags } from '../store/run-store'
import { fakeRun } from '../testing/run-fixtures'
import { BenchService } from './bench-service'
import { dispatch } from './dispatch'

let dir: string
let store: RunStore
let service: BenchService
beforeEach(async () => {
  dir = mkdtempSync(join(os.tmpdir(), 'trainpool-limits-'))
  store = new RunStore(dir)
  await store.save(fakeRun({}, 'run-a'))
  service = new BenchService({ launcher: {} as never, store, shell: 'cli', telemetry: false })
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const tags = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`)
const accepts = (f: () => unknown) => {
  try {
    f()
    return true
  } catch {
    return false
  }
}

describe('run name and tag limits', () => {
  it('a name one character too long is refused at the API, naming the field and the limit', async () => {
    const name = 'n'.repeat(RUN_LIMITS.nameLength + 1)
    const reply = await dispatch(service, 'renameRun', { runId: 'run-a', name })
    expect(reply).toMatchObject({
      ok: false,
      error: {
        code: 'invalid-input',
        message: expect.stringMatching(/^invalid renameRun request: name: at most 120 characters/),
        issues: [{ field: 'name', message: expect.stringMatching(/^at most 120 characters/) }],
      },
    })
    expect(await store.get('run-a')).toEqual(fakeRun({}, 'run-a'))
  })

  it('one tag too many is refused at the API, naming the field, the limit and the count', async () => {
    const reply = await dispatch(service, 'tagRun', { runId: 'run-a', tags: tags(RUN_LIMITS.tags + 1) })
    expect(reply).toMatchObject({
      ok: false,
      error: { code: 'invalid-input', message: 'invalid tagRun request: tags: at most 20 tags (got 21)', issues: [{ field: 'tags' }] },
    })
    const long = await dispatch(service, 'tagRun', { runId: 'run-a', tags: ['ok', 't'.repeat(RUN_LIMITS.tagLength + 1)] })
    expect(long).toMatchObject({
      ok: false,
      error: { code: 'invalid-input', issues: [{ field: 'tags.1', message: expect.stringMatching(/^at most 40 characters/) }] },
    })
    expect(await store.get('run-a')).toEqual(fakeRun({}, 'run-a'))
  })

  it('at the limits the API and the store both accept, and store what the API cleaned', async () => {
    const name = 'n'.repeat(RUN_LIMITS.nameLength)
    expect(await dispatch(service, 'renameRun', { runId: 'run-a', name: `  ${name}  ` })).toMatchObject({ ok: true, value: { name } })
    expect(await dispatch(service, 'tagRun', { runId: 'run-a', tags: [...tags(RUN_LIMITS.tags - 1), ' t0 '] })).toMatchObject({
      ok: true,
      value: { tags: tags(RUN_LIMITS.tags - 1) },
    })
    const stored = await store.get('run-a')
    expect(stored.name).toBe(name)
    expect(stored.tags).toEqual(tags(RUN_LIMITS.tags - 1))
  })

  it('the API schema and the store agree on every name length and tag count around the limits', () => {
    for (let n = RUN_LIMITS.nameLength - 2; n <= RUN_LIMITS.nameLength + 2; n++) {
      const name = 'x'.repeat(n)
      const api = API.renameRun.request.safeParse({ runId: 'run-a', name }).success
      expect(api, `name of ${n}`).toBe(accepts(() => cleanName(name)))
      expect(api, `name of ${n}`).toBe(n <= RUN_LIMITS.nameLength)
    }
    for (let n = RUN_LIMITS.tags - 2; n <= RUN_LIMITS.tags + 2; n++) {
      const api = API.tagRun.request.safeParse({ runId: 'run-a', tags: tags(n) }).success
      expect(api, `${n} tags`).toBe(accepts(() => cleanTags(tags(n))))
      expect(api, `${n} tags`).toBe(n <= RUN_LIMITS.tags)
    }
  })

  it('the API and the store accept the same run ids', () => {
    for (const runId of [
      'a',
      '20250101-000000-abcdef',
      'A_b-9',
      'x'.repeat(64),
      'x'.repeat(65),
      '',
      '.',
      '..',
      '../x',
      'a/b',
      'a\\b',
      'a.b',
      'run id',
      'ü',
      'a\u0000b',
    ]) {
      const api = API.getRun.request.safeParse({ runId }).success
      expect(api, JSON.stringify(runId)).toBe(accepts(() => store.runDir(runId)))
    }
  })
})
