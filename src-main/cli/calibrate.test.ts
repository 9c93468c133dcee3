// `trainpool calibrate` for real: both families, so the MLP's several candidates here (onnxruntime,
// wasm, cpu; webgpu where the probe finds it, lavapipe included) are timed against each other and
// the pick is the fastest batched step of the table it prints; the trees' only candidate is cpu. It
// prints the tables and the picks, keeps them in the store, writes --json as bench does (a link
// there is replaced, never written through), and the next `bench --backend auto` runs on the pick
// without calibrating. What it cannot keep (a full disk) it says it did not keep, and fails (exit 1);
// a --json path that cannot take the file is refused before anything is timed (exit 2); a bad
// --family is refused (exit 2) naming the accepted ones.
import { spawnSync } from 'node:child_process'
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { FamilyCalibrationSchema } from '@shared/contract'
import { CALIBRATION_DIR } from '../store/calibration-cache'
import { skipWithout } from '../testing/capability'
import { killAll, spawnCli } from '../testing/cli-process'
import { calibrateCommand } from './calibrate-command'

const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-calibrate-cli-'))
afterAll(() => {
  killAll()
  rmSync(dir, { recursive: true, force: true })
})
afterEach(() => vi.restoreAllMocks())

// the suite's TRAINPOOL_AUTO=order (vitest.config.ts) off: these runs take auto by calibration
const byCalibration = { TRAINPOOL_AUTO: undefined }

/** A printed table's rows by backend: each column's cell (split on the two spaces between columns). */
function tableRows(stdout: string, title: RegExp): Map<string, string[]> {
  const lines = stdout.split('\n')
  const start = lines.findIndex((l) => title.test(l))
  expect(start, stdout).toBeGreaterThanOrEqual(0)
  const rows = new Map<string, string[]>()
  for (const line of lines.slice(start + 3)) {
    if (!/^\w+ {2}/.test(line)) break
    const cells = line.split(/ {2,}/)
    rows.set(cells[0], cells)
  }
  return rows
}

/** "10 ms", "1.37 s", "0.78 ms" in ms; null for "–" or "over …" */
function stepMs(cell: string): number | null {
  const m = /^(\d[\d.]*) (ms|s)$/.exec(cell)
  return m ? Number(m[1]) * (m[2] === 's' ? 1000 : 1) : null
}

it('calibrate prints both tables, picks the fastest of the MLP candidates, writes --json over a link, and bench --backend auto then runs on the pick', async () => {
  const kept = join(dir, 'kept.json')
  writeFileSync(kept, 'not to be touched')
  const json = join(dir, 'calibration.json')
  symlinkSync(kept, json)
  const cli = spawnCli('calibrate', ['--store', dir, '--json', json], [], byCalibration)
  const { code } = await cli.exited
  expect(code, cli.out.stderr).toBe(0)
  // the MLP: several candidates timed, each one measured, the pick the fastest batched step of the table
  const timed = [...cli.out.stderr.matchAll(/^calibrating auto for the neural network \(MLP\): timing (\w+) \((\d+) of (\d+)\)$/gm)]
  expect(timed.length, cli.out.stderr).toBeGreaterThanOrEqual(3)
  expect(timed.map((m) => m[1])).toEqual(expect.arrayContaining(['onnxruntime', 'wasm', 'cpu']))
  const mlp = tableRows(cli.out.stdout, /^MLP .* on 2560 rows: one model alone and 50 fused$/)
  for (const backend of ['onnxruntime', 'wasm', 'cpu']) expect(stepMs(mlp.get(backend)![1]), `${backend} one model`).toBeGreaterThan(0)
  const batched = [...mlp].flatMap(([backend, cells]) => (stepMs(cells[4]) === null ? [] : [{ backend, ms: stepMs(cells[4])! }]))
  expect(batched.length, cli.out.stdout).toBeGreaterThanOrEqual(2)
  const fastest = batched.reduce((a, b) => (b.ms < a.ms ? b : a))
  expect(cli.out.stdout).toMatch(
    new RegExp(`^auto → ${fastest.backend}: a batched step of 50 models in .*, against .*\\(calibrated \\d{4}-\\d\\d-\\d\\d\\)$`, 'm'),
  )

  // the trees: cpu the only candidate
  expect(cli.out.stderr).toMatch(/^calibrating auto for the gradient-boosted trees: timing cpu \(1 of 1\)$/m)
  expect(cli.out.stdout).toMatch(/^GBDT 4 rounds, depth 6, .* on 10k rows: one model alone and 10 fused$/m)
  expect(cli.out.stdout).toMatch(
    /^backend +one model \/ round +10 fused \/ round +10 over \d+ workers? \/ round +fastest batched +device, or why not measured$/m,
  )
  // one core: no spread measured (–)
  expect(cli.out.stdout).toMatch(/^cpu +\d[\d.]* m?s +\d[\d.]* m?s +(\d[\d.]* m?s|–) +\d[\d.]* m?s +\S/m)
  expect(cli.out.stdout).toMatch(/^xgboost +– +– +– +– +not a choice of auto: only when asked for by name$/m)
  expect(cli.out.stdout).toMatch(/^auto → cpu: a batched round of 10 models in .*, the only backend auto could measure here \(calibrated \d{4}-\d\d-\d\d\)$/m)
  expect(cli.out.stdout).toMatch(/^kept in .*\.calibration\/ for this machine and Trainpool .*; runs with --backend auto use it$/m)
  expect(readdirSync(join(dir, CALIBRATION_DIR)).filter((n) => n.endsWith('.json'))).toHaveLength(1)
  // --json: the link replaced by the file, its target untouched
  expect(lstatSync(json).isFile()).toBe(true)
  expect(readFileSync(kept, 'utf8')).toBe('not to be touched')
  const written = z.array(FamilyCalibrationSchema).parse(JSON.parse(readFileSync(json, 'utf8')))
  expect(written).toMatchObject([
    { kind: 'mlp', auto: fastest.backend },
    { kind: 'gbdt', auto: 'cpu' },
  ])

  const bench = spawnCli('bench', ['--model', 'gbdt', '--preset', 'smoke', '--rounds', '3', '--strategies', 'sequential', '--store', dir], [], byCalibration)
  const ran = await bench.exited
  expect(ran.code, bench.out.stderr).toBe(0)
  expect(bench.out.stderr).not.toMatch(/calibrating/)
  expect(bench.out.stdout).toMatch(/^auto → cpu: .* \(calibrated \d{4}-\d\d-\d\d\)$/m)
}, 120_000)

const prlimit = process.platform === 'linux' && spawnSync('prlimit', ['--version']).status === 0

it.skipIf(skipWithout('prlimit', prlimit, 'util-linux prlimit is not installed'))(
  'a calibration the store cannot keep (a full disk) is said not kept, and the command fails (exit 1)',
  async () => {
    const store = join(dir, 'full')
    // the trees' calibration file (a few kB) is over the file-size limit: EFBIG, as a full disk
    const cli = spawnCli('calibrate', ['--family', 'gbdt', '--store', store], ['prlimit', '--fsize=1024'], byCalibration)
    const { code } = await cli.exited
    expect(code, cli.out.stderr).toBe(1)
    expect(cli.out.stdout).toMatch(/^auto → cpu: /m)
    expect(cli.out.stdout).toMatch(
      /^not kept in .*full\/\.calibration\/: it could not be written to .*\.json \((EFBIG|ENOSPC)[^)]*\); runs with --backend auto do not use it \(calibrate again\)$/m,
    )
    expect(cli.out.stdout).not.toMatch(/^kept in/m)
    expect(readdirSync(join(store, CALIBRATION_DIR))).toEqual([])
  },
  60_000,
)

/** calibrateCommand in this process, its stderr caught: a refused --json returns before a service opens. */
async function calibrateHere(flags: Parameters<typeof calibrateCommand>[0]): Promise<{ code: number; stderr: string }> {
  let stderr = ''
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true))
  const code = await calibrateCommand(flags, 'test')
  return { code, stderr }
}

it('a --json in a missing folder is refused before anything is timed (exit 2), naming --json', async () => {
  const store = join(dir, 'untouched-1')
  const { code, stderr } = await calibrateHere({ store, family: 'gbdt', json: join(dir, 'no-such-folder', 'c.json') })
  expect(code).toBe(2)
  expect(stderr).toMatch(/^trainpool calibrate: --json .*no-such-folder\/c\.json: cannot write there \(ENOENT[^)]*\)\n$/)
  expect(existsSync(store)).toBe(false)
})

const mkfifo = process.platform !== 'win32' && spawnSync('mkfifo', ['--version']).status === 0

it.skipIf(skipWithout('mkfifo', mkfifo, 'mkfifo is not installed'))('a --json FIFO is refused at once (exit 2), not waited on', async () => {
  const fifo = join(dir, 'pipe')
  spawnSync('mkfifo', [fifo])
  const store = join(dir, 'untouched-2')
  const { code, stderr } = await calibrateHere({ store, family: 'gbdt', json: fifo })
  expect(code).toBe(2)
  expect(stderr).toMatch(/^trainpool calibrate: --json .*pipe is a FIFO \(named pipe\): .* is accepted\n$/)
  expect(existsSync(store)).toBe(false)
})

it('calibrate --family with an unknown family exits 2 naming the accepted ones', async () => {
  const cli = spawnCli('calibrate', ['--family', 'trees', '--store', dir], [], byCalibration)
  const { code } = await cli.exited
  expect(code).toBe(2)
  expect(cli.out.stderr).toBe('trainpool calibrate: --family accepts mlp, gbdt (got "trees")\n')
})
