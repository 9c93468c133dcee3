// How good is the estimate the config panel shows before Run? For the smoke and quick presets (MLP
// on wasm, trees on the cpu engine) it runs `trainpool bench` and compares the whole run's wall
// time (start to finish, pools started and warmed included) with estimateRun() for the same config
// (and the MLP on onnxruntime, auto's choice where it loads):
// target within ±30 %. Called by `npm run bench`; prints one line per preset and a JSON line last.
//   node --import tsx benchmarks/estimate-check.mts
import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseRunResult } from '../src-shared/contract/migrate.ts'
import { estimateRun } from '../src-shared/estimate.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const cases = [
  { preset: 'smoke', args: ['--backend', 'wasm'] },
  { preset: 'quick', args: ['--backend', 'wasm'] },
  // what `auto` picks for the MLP on a CPU machine with onnxruntime-node installed (families/mlp.ts)
  { preset: 'smoke', args: ['--backend', 'onnxruntime'] },
  { preset: 'quick', args: ['--backend', 'onnxruntime'] },
  { preset: 'smoke', args: ['--model', 'gbdt', '--backend', 'cpu'] },
  { preset: 'quick', args: ['--model', 'gbdt', '--backend', 'cpu'] },
]
const rows: { preset: string; family: string; backend: string; estimateMs: number; actualMs: number; ratio: number; within: boolean }[] = []
for (const c of cases) {
  const json = join(os.tmpdir(), `trainpool-estimate-${process.pid}.json`)
  const r = spawnSync(process.execPath, [join(root, 'bin/trainpool.js'), 'bench', '--preset', c.preset, ...c.args, '--no-save', '--json', json], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  if (r.status !== 0) {
    console.log(`${c.preset} ${c.args.join(' ')}: bench exited ${r.status}`)
    continue
  }
  const run = parseRunResult(JSON.parse(readFileSync(json, 'utf8')))
  rmSync(json, { force: true })
  const actualMs = Date.parse(run.finishedAt!) - Date.parse(run.startedAt)
  const estimateMs = estimateRun(run.config, run.environment!.backend, { cpuCount: os.cpus().length }).totalMs!
  const ratio = estimateMs / actualMs
  rows.push({
    preset: c.preset,
    family: run.config.model.kind,
    backend: run.environment!.backend,
    estimateMs,
    actualMs,
    ratio,
    within: Math.abs(ratio - 1) <= 0.3,
  })
  const last = rows[rows.length - 1]
  console.log(
    `estimate ${last.family} ${last.preset} on ${last.backend}: estimated ${(estimateMs / 1000).toFixed(2)} s, actual ${(actualMs / 1000).toFixed(2)} s → ${ratio.toFixed(2)}× (${last.within ? 'within' : 'OUTSIDE'} ±30 %)`,
  )
}
console.log(JSON.stringify(rows))
