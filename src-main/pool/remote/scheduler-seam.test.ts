// A new scheduler is one file and one registry line: a toy one registered only in this test (its
// tasks are local processes that dial back, as the process scheduler's) starts the workers of a
// real run, and a run record naming it has its jobs cancelled by it, not by Slurm.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LauncherSchema, presetConfig } from '@shared/contract'
import { BenchRunner } from '../../bench/runner'
import { cancelJobsOfRun, registerScheduler, schedulerFor } from '../schedulers'
import { WorkerGateway } from './gateway'
import { ProcessScheduler } from './process-scheduler'
import { RemoteLauncher } from './remote-launcher'
import type { SchedulerTask } from './scheduler'
import { newRunSecret } from './token'

let gateway: WorkerGateway
beforeAll(async () => {
  gateway = await WorkerGateway.listen({ host: '127.0.0.1', port: 0 }, newRunSecret(), () => {})
})
afterAll(() => gateway.close())

/** The toy: local processes under another name, counting what it is asked to do. */
class ToyScheduler extends ProcessScheduler {
  override readonly name = 'the toy scheduler'
  submitted = 0
  override async submit(tasks: SchedulerTask[], command: string[], env: Record<string, string>): Promise<void> {
    this.submitted += tasks.length
    return super.submit(tasks, command, env)
  }
}
const made: ToyScheduler[] = []
const cancelled: string[] = []
registerScheduler({
  kind: 'toy',
  create: () => {
    const toy = new ToyScheduler()
    made.push(toy)
    return toy
  },
  cancelRecorded: async (jobIds) => void cancelled.push(...jobIds),
})

describe('the scheduler seam', () => {
  it("a toy scheduler registered in one line starts a run's workers; they train what they are sent", async () => {
    // the toy reads none of the launcher's fields
    const toy = schedulerFor({ engine: 'toy' }).create(LauncherSchema.parse({ engine: 'slurm' }), { logDir: '', cwd: process.cwd() })
    const config = presetConfig('smoke', { backend: 'cpu', workers: [2], models: [2], strategies: ['pool'] })
    const outcome = await new BenchRunner(new RemoteLauncher(gateway, toy), config).run()
    expect(outcome.status).toBe('ok')
    expect(outcome.measurements[0].modelsTrained).toBe(2)
    expect(made[0].submitted).toBe(2)
    expect(made[0].livePids).toEqual([])
  })

  it('a run record names its scheduler, which cancels its jobs; an unknown one is refused naming those accepted', async () => {
    await cancelJobsOfRun({ scheduler: { engine: 'toy', jobIds: ['7', '8'] } })
    expect(cancelled).toEqual(['7', '8'])
    expect(() => schedulerFor({ engine: 'ray' })).toThrow(/no scheduler "ray": accepted slurm, toy/)
  })
})
