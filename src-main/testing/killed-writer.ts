// Child process for the "atomic write survives kill -9" test: rewrites one run again and again,
// one more measurement each time (measurement i has repeat i), and reports every completed save
// on stdout ("saved N").
import { RunStore } from '../store/run-store'
import { fakeMeasurement, fakeRun } from './run-fixtures'

const [dir, runId] = process.argv.slice(2)
const store = new RunStore(dir)
const base = fakeRun({ sizes: [2000], models: [8], workers: [2] }, runId)

async function main(): Promise<never> {
  const measurements = []
  for (let n = 1; ; n++) {
    measurements.push(fakeMeasurement({ size: 2000, models: 8, workers: 2, strategy: 'pool', repeat: n - 1 }))
    await store.save({ ...base, status: 'running', measurements, summary: [] })
    process.stdout.write(`saved ${n}\n`)
  }
}

void main()
