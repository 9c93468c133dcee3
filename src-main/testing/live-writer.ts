// Child process for the shared-store tests: writes one run as its live writer (status `running`,
// writer lock held and refreshed), says "writing" on stdout, then stays alive until killed.
import { RunStore } from '../store/run-store'
import { fakeRun } from './run-fixtures'

const [dir, runId, heartbeatMs] = process.argv.slice(2)
const store = new RunStore(dir, { heartbeatMs: Number(heartbeatMs) || undefined })

async function main(): Promise<void> {
  await store.save({ ...fakeRun({}, runId), status: 'running' }, { writer: true })
  process.stdout.write('writing\n')
  setInterval(() => undefined, 1000) // stay alive (the lock's own timer does not hold the process)
}

void main()
