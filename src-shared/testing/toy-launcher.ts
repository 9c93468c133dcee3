// A launcher that exists only in tests: the shared half of the toy scheduler
// (src-main/pool/remote/scheduler-seam.test.ts registers it with its scheduler in one line; the
// renderer's "Where to run" test registers this half alone). One field of its own, a lane name, so
// the test can see its flag, its box and its refusal come from this spec and nothing else.
import { z } from 'zod'
import { defineLauncher, textOf, textRead } from '../contract/launcher-spec'

export const toyLauncher = defineLauncher({
  engine: 'toy',
  name: 'Toy',
  label: 'Toy scheduler',
  help: 'each worker a local process under the toy scheduler',
  fields: [
    {
      key: 'lane',
      label: 'Toy lane',
      flag: '--toy-lane',
      valueName: 'name',
      help: 'the lane the toy queues its tasks in',
      placeholder: 'the default lane',
      schema: z
        .string()
        .regex(/^[a-z]{1,20}$/, 'launcher.lane accepts a lane name in lowercase letters, such as blue')
        .optional(),
      read: textRead,
      text: textOf,
    },
  ],
  assignsGpus: 'the toy gives each task its GPU',
  unavailable: { why: 'the toy cannot queue here', instead: 'start the toy' },
  summary: 'Each worker is a toy task that dials back to this app.',
  estimateNote: 'toy tasks, their queue wait not counted',
  describe: (choice) => `lane ${String(choice.lane ?? 'default')} · queue timeout ${choice.queueTimeoutS} s`,
})
