// The schedulers Trainpool can start remote workers with: one line each (a scheduler is one file,
// remote/scheduler.ts says what it offers). Importing this module registers them; the one module
// outside pool/slurm/ that imports it (eslint.config.mjs).
import { registerScheduler } from './remote/scheduler'
import { slurmScheduler } from './slurm/slurm-scheduler'

registerScheduler(slurmScheduler)

export { allSchedulers, cancelJobsOfRun, registerScheduler, schedulerFor, type SchedulerEntry } from './remote/scheduler'
