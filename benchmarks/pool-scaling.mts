// Pool W=2 against W=1 on many small jobs (issue 24): the MLP on onnxruntime (1 thread per worker),
// one model per job, the pool alone (no runner, no service), each pool started and warmed once, then
// the repeats alternating between the pools so that the machine's noise falls on both. `--compare
// PATH` adds a second WorkerPool implementation (a module exporting WorkerPool, e.g. an older copy
// of src-main/pool/worker-pool.ts) measured in the same alternation. Prints one line per pool (wall
// times, and busy: the models' own training time over W × wall, 1 when no worker ever waits for a
// job — what a shared machine's noise blurs least) and the W=2 / W=1 speed-ups (median and per
// repeat), then a JSON line.
//   node --import tsx benchmarks/pool-scaling.mts [--size 10000] [--models 50] [--repeats 3] [--discard 1] [--epochs 3] [--backend onnxruntime] [--compare PATH]
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { NodeLauncher } from '../src-main/pool/node-launcher.ts'
import { type JobSpec, WorkerPool } from '../src-main/pool/worker-pool.ts'
import { presetConfig } from '../src-shared/contract/config.ts'
import type { BackendName } from '../src-shared/contract/config.ts'
import { workloadFor } from '../src-shared/contract/workload.ts'

const { values: args } = parseArgs({
  options: {
    size: { type: 'string', default: '10000' },
    models: { type: 'string', default: '50' },
    repeats: { type: 'string', default: '3' },
    epochs: { type: 'string', default: '3' },
    backend: { type: 'string', default: 'onnxruntime' },
    compare: { type: 'string' },
    /** rounds run first and not counted (the processes' JIT and caches settle) */
    discard: { type: 'string', default: '1' },
  },
})
const size = Number(args.size)
const models = Number(args.models)
const repeats = Number(args.repeats)
const discard = Number(args.discard)
const backend = args.backend as BackendName
const config = presetConfig('article', {
  backend,
  sizes: [size],
  models: [models],
  features: 100,
  model: { kind: 'mlp', epochs: Number(args.epochs), hidden: [64], batchSize: 512 },
})
const workload = workloadFor(config, size)
const jobs: JobSpec[] = Array.from({ length: models }, (_, i) => ({ workload, modelIndices: [i], fused: false }))

type PoolClass = typeof WorkerPool
const implementations: Array<{ name: string; Pool: PoolClass }> = [{ name: 'this', Pool: WorkerPool }]
if (args.compare) implementations.push({ name: 'compare', Pool: ((await import(resolve(args.compare))) as { WorkerPool: PoolClass }).WorkerPool })

// the worker from the sources, through tsx (as the tests run it)
const launcher = new NodeLauncher({
  path: join(dirname(fileURLToPath(import.meta.url)), '..', 'src-main', 'worker', 'index.ts'),
  execArgv: ['--import', 'tsx'],
})
/** busy: the models' own training time over W × the wall time (1 = no worker ever waited for a job) */
const pools: Array<{ label: string; impl: string; workers: number; pool: WorkerPool; ms: number[]; busy: number[] }> = []
try {
  for (const { name, Pool } of implementations) {
    for (const workers of [1, 2]) {
      const pool = new Pool(launcher, { size: workers, family: 'mlp', backend, failurePolicy: 'stop' })
      await pool.start()
      await pool.warmup(
        workload,
        jobs.slice(0, workers).map(() => [0]),
      )
      pools.push({ label: `${name} W=${workers}`, impl: name, workers, pool, ms: [], busy: [] })
    }
  }
  for (let r = 0; r < discard + repeats; r++) {
    // alternate the order too, so no pool always runs first after the others
    for (const p of r % 2 === 0 ? pools : [...pools].reverse()) {
      const started = performance.now()
      const outcomes = await p.pool.run(jobs)
      const wallMs = performance.now() - started
      const trainMs = outcomes.flatMap((o) => o.models).reduce((sum, m) => sum + (m.trainMs ?? 0), 0)
      if (r >= discard) {
        p.ms.push(wallMs)
        p.busy.push(trainMs / (p.workers * wallMs))
      }
      const bad = outcomes.filter((o) => o.status !== 'done')
      if (bad.length > 0) throw new Error(`${p.label}: ${bad.length} jobs not done: ${bad[0].failure?.reason ?? bad[0].status}`)
    }
  }
} finally {
  await Promise.all(pools.map((p) => p.pool.shutdown()))
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
console.log(
  `${backend}, ${size} rows × ${models} models, one model per job, ${args.epochs} epochs, ${repeats} alternating repeats after ${discard} not counted`,
)
for (const p of pools) {
  console.log(
    `${p.label.padEnd(12)} median ${(median(p.ms) / 1000).toFixed(3)} s  repeats ${p.ms.map((m) => (m / 1000).toFixed(3)).join(', ')} s  busy ${p.busy.map((b) => `${(100 * b).toFixed(1)} %`).join(', ')}`,
  )
}
const result: Record<string, { w1: number[]; w2: number[]; speedup: number; perRepeat: number[]; busyW1: number[]; busyW2: number[] }> = {}
for (const { name } of implementations) {
  const p1 = pools.find((p) => p.impl === name && p.workers === 1)!
  const p2 = pools.find((p) => p.impl === name && p.workers === 2)!
  const [w1, w2] = [p1.ms, p2.ms]
  const perRepeat = w1.map((m, i) => m / w2[i])
  result[name] = { w1, w2, speedup: median(w1) / median(w2), perRepeat, busyW1: p1.busy, busyW2: p2.busy }
  console.log(`${name}: W=2 vs W=1 ${(median(w1) / median(w2)).toFixed(2)}× (per repeat ${perRepeat.map((x) => x.toFixed(2)).join(', ')})`)
}
console.log(JSON.stringify(result))
