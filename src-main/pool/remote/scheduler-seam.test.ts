// A new launcher is one file and one registry line: a toy one (its shared half,
// @shared/testing/toy-launcher.ts; its scheduler, local processes that dial back as the process
// scheduler's) registered only in this test appears in the CLI's flags and help, in the
// capabilities and in config.launcher's schema, starts the workers of a real run through the
// service, and a run record naming it has its jobs cancelled by it, not by Slurm. The renderer's
// half (its "Where to run") is src-renderer/components/ConfigPanel.launcher.test.ts.
import { describe, expect, it } from 'vitest'
import { BenchConfigSchema, presetConfig } from '@shared/contract'
import { toyLauncher } from '@shared/testing/toy-launcher'
import { configFromFlags, launcherOptions } from '../../cli/options'
import { BenchService } from '../../service/bench-service'
import { cancelJobsOfRun, registerScheduler, schedulerFor } from '../schedulers'
import { ProcessScheduler } from './process-scheduler'
import type { SchedulerTask } from './scheduler'

/** The toy: local processes under another name, counting what it is asked to do. */
class ToyScheduler extends ProcessScheduler {
  override readonly name = 'the toy scheduler'
  submitted = 0
  override async submit(tasks: SchedulerTask[], command: string[], env: Record<string, string>): Promise<void> {
    this.submitted += tasks.length
    return super.submit(tasks, command, env)
  }
}
const made: { toy: ToyScheduler; lane: unknown }[] = []
const cancelled: string[] = []
registerScheduler({
  spec: toyLauncher,
  check: async () => ({ available: true, detail: 'toy 1.0' }),
  create: (choice) => {
    const toy = new ToyScheduler()
    made.push({ toy, lane: choice.lane })
    return toy
  },
  cancelRecorded: async (jobIds) => void cancelled.push(...jobIds),
})

const service = () =>
  new BenchService({
    launcher: {} as never,
    store: null,
    shell: 'cli',
    telemetry: false,
    probe: async () => [{ name: 'cpu', available: true, detail: 'test cpu' }],
    discoverGpus: async () => [],
    // Slurm's own check would run sbatch: this machine's answer is not what this test is about
    checkLaunchers: { slurm: async () => ({ available: false, detail: 'not asked in this test' }) },
  })

describe('the launcher seam', () => {
  it("the toy's flags are the CLI's (bench's options are made from launcherOptions), read into config.launcher, refused by their flag", () => {
    const { launcherHelp, flags } = launcherOptions()
    expect(flags.find((f) => f.option === '--toy-lane <name>')?.help).toBe('with --launcher toy: the lane the toy queues its tasks in')
    expect(launcherHelp).toMatch(/\| toy \(each worker a local process under the toy scheduler\)$/)
    // the queue timeout is every launcher's: one flag, said for both
    expect(flags.filter((f) => f.option.startsWith('--queue-timeout ')).map((f) => f.help)).toEqual([
      "with --launcher slurm or --launcher toy: a task still pending after this long fails the run with the scheduler's reason",
    ])

    expect(configFromFlags({ preset: 'smoke', launcher: 'toy', toyLane: 'blue', queueTimeout: '30' }).launcher).toEqual({
      engine: 'toy',
      lane: 'blue',
      queueTimeoutS: 30,
    })
    expect(() => configFromFlags({ preset: 'smoke', toyLane: 'blue' })).toThrow(/^--toy-lane applies to Toy workers only: add --launcher toy$/)
    expect(() => configFromFlags({ preset: 'smoke', launcher: 'toy', partition: 'gpu' })).toThrow(
      /^--partition applies to Slurm workers only: add --launcher slurm$/,
    )
    expect(() => configFromFlags({ preset: 'smoke', launcher: 'toy', toyLane: 'Blue 2' })).toThrow(
      /^--toy-lane accepts a lane name in lowercase letters, such as blue/,
    )
    expect(() => configFromFlags({ preset: 'smoke', launcher: 'ray' })).toThrow(/--launcher "ray" is not a launcher; accepted: local .*, slurm, toy$/)
    // the contract's own refusals speak its words: --gpus beside it
    const withGpus = BenchConfigSchema.safeParse({ ...presetConfig('smoke'), gpus: 'all', launcher: { engine: 'toy' } })
    expect(withGpus.success ? [] : withGpus.error.issues.map((i) => i.message)).toEqual([
      "gpus picks this machine's GPUs; with launcher toy, the toy gives each task its GPU: leave gpus out",
    ])
  })

  it('the capabilities say whether it can submit here, from its own check', async () => {
    expect((await service().capabilities()).launchers).toEqual({
      slurm: { available: false, detail: 'not asked in this test' },
      toy: { available: true, detail: 'toy 1.0' },
    })
  })

  it('a run with config.launcher toy goes through the service to the toy scheduler; its workers train what they are sent', async () => {
    const s = service()
    const { runId } = await s.start({
      config: presetConfig('smoke', { backend: 'cpu', workers: [2], models: [2], strategies: ['pool'], launcher: { engine: 'toy', lane: 'blue' } as never }),
    })
    const run = await s.waitForRun(runId)
    expect(run.status).toBe('ok')
    expect(run.measurements[0].modelsTrained).toBe(2)
    expect(run.scheduler).toMatchObject({ engine: 'toy' })
    expect(made.map((m) => m.lane)).toEqual(['blue'])
    expect(made[0].toy.submitted).toBe(2)
    expect(made[0].toy.livePids).toEqual([])
  })

  it('a run record names its scheduler, which cancels its jobs; an unknown one is refused naming those accepted', async () => {
    await cancelJobsOfRun({ scheduler: { engine: 'toy', jobIds: ['7', '8'] } })
    expect(cancelled).toEqual(['7', '8'])
    expect(() => schedulerFor({ engine: 'ray' })).toThrow(/no scheduler "ray": accepted slurm, toy/)
  })
})
