// The schedulers Trainpool can start remote workers with: one line each (a scheduler is one file,
// remote/scheduler.ts says what it offers). Importing this module registers them.
import { registerScheduler } from './remote/scheduler'
import { slurmScheduler } from './slurm/slurm-scheduler'

registerScheduler(slurmScheduler)

export { cancelJobsOfRun, registerScheduler, schedulerFor } from './remote/scheduler'
