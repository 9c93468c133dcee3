// Errors quote a user's value once, cut: a 900 KB run id once came back twice in a 1.8 MB reply.
// Every path that echoes input (the contract's field issues, an unknown method, the store's run-id
// check) quotes it through echoValue (src-shared/vocabulary/errors.ts), at most ECHO_LIMIT characters.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ECHO_LIMIT, TrainpoolError } from '@shared/contract'
import { FakeService } from '@shared/testing/fake-service'
import { RunStore } from '../store/run-store'
import { dispatch } from './dispatch'

const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-long-input-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const huge = 'x'.repeat(900_000)
const replySize = (reply: unknown) => JSON.stringify(reply).length

describe('a huge input is quoted once, cut', () => {
  it('a 900 KB run id, name, method or field name gets a reply under 2 KB that says how long the value was', async () => {
    const service = new FakeService()
    const replies = [
      await dispatch(service, 'getRun', { runId: huge }),
      await dispatch(service, 'renameRun', { runId: 'a', name: huge }),
      await dispatch(service, huge, {}),
      await dispatch(service, 'getRun', { runId: 'a', [huge]: 1 }),
      await dispatch(service, 'getRun', Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]))),
    ]
    for (const reply of replies) {
      expect(reply.ok).toBe(false)
      expect(replySize(reply)).toBeLessThan(2000)
    }
    const first = replies[0]
    expect(!first.ok && first.error.message).toMatch(/\(900002 characters\)/)
  })

  it("the store's own run-id check cuts it too", async () => {
    const err = await new RunStore(dir).get(huge).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(TrainpoolError)
    expect((err as TrainpoolError).message.length).toBeLessThan(ECHO_LIMIT + 200)
  })
})
