// The serving process itself dies or its disk fills: `trainpool bench` (from sources via tsx) is
// SIGKILLed after its first measurement is stored — its workers exit on their own (they watch the
// IPC channel), and the next start-up (`trainpool serve`) lists the run as interrupted with every
// finished measurement intact. And with a file-size limit (prlimit --fsize, as a full disk does)
// the run still finishes, the CLI says it could not be saved and exits 1, nothing stored is
// corrupted, and a run never saved leaves no empty folder; a data table that does not fit exits 1.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { RunResult } from '@shared/contract'
import { RunStore } from '../store/run-store'
import { fakeRun } from '../testing/run-fixtures'
import { processAlive, skipWithout, waitUntil } from '../testing/capability'
import { childrenOf, killAll, spawnCli } from '../testing/cli-process'
import { tempDir } from '../testing/service-harness'

let faults = 0
afterEach(killAll)
afterAll(() => console.log(`[reliability] faults injected in process-kill.test.ts: ${faults}`))

function readRun(dir: string): RunResult | null {
  try {
    const [id] = readdirSync(dir)
    return JSON.parse(readFileSync(join(dir, id, 'run.json'), 'utf8')) as RunResult
  } catch {
    return null
  }
}

const linux = process.platform === 'linux'

describe.skipIf(!linux)('the serving process is SIGKILLed mid-run', () => {
  it('orphaned workers exit on their own; on restart the run is interrupted with its measurements intact', async () => {
    const dir = tempDir('killed-cli')
    const bench = spawnCli('bench', [
      '--preset',
      'smoke',
      '--backend',
      'wasm',
      '--strategies',
      'sequential,pool,batched',
      '--workers',
      '2',
      '--epochs',
      '60',
      '--repeats',
      '2',
      '--store',
      dir,
    ])
    // wait until the first measurement is on disk
    let snapshot: RunResult | null = null
    const stored = await waitUntil(
      () => {
        snapshot = readRun(dir)
        return (snapshot?.measurements.length ?? 0) >= 1
      },
      90_000,
      50,
    )
    expect(stored, bench.out.stderr).toBe(true)
    // another process starting on the same store (the app, or here `trainpool serve`) while the run
    // is live must leave it alone: its writer is alive and holds the run's lock
    const early = spawnCli('serve', ['--port', '0', '--store', dir])
    expect(await waitUntil(() => /\?token=/.test(early.out.stdout), 30_000), early.out.stderr).toBe(true)
    expect(readRun(dir)?.status).toBe('running')
    expect(readdirSync(join(dir, readRun(dir)!.runId))).toContain('writer.lock')
    early.child.kill('SIGINT')
    // seen once under a loaded full run: code null (a signal); say which, and what it printed
    expect(await early.exited, early.out.stderr).toEqual({ code: 0, signal: null })
    expect(bench.child.exitCode, 'the bench run ended before the kill: make it longer').toBeNull()
    const workers = childrenOf(bench.child.pid!)
    expect(workers.length).toBeGreaterThan(0)
    faults++
    bench.child.kill('SIGKILL')
    expect(await bench.exited).toEqual({ code: null, signal: 'SIGKILL' })
    const t0 = Date.now()
    expect(await waitUntil(() => workers.every((p) => !processAlive(p)), 5000)).toBe(true)
    console.log(`[reliability] ${workers.length} orphaned worker(s) exited ${Date.now() - t0} ms after their parent was SIGKILLed`)
    const before = readRun(dir)!
    expect(before.status).toBe('running')
    expect(before.measurements.length).toBeGreaterThanOrEqual(snapshot!.measurements.length)

    // restart: `trainpool serve` on the same store marks it interrupted at start-up
    const serve = spawnCli('serve', ['--port', '0', '--store', dir])
    expect(await waitUntil(() => /\?token=/.test(serve.out.stdout), 30_000), serve.out.stderr).toBe(true)
    const store = new RunStore(dir)
    const [entry] = await store.list()
    expect(entry.status).toBe('interrupted')
    const after = await store.get(entry.runId)
    expect(after.measurements).toEqual(before.measurements)
    expect(after.measurements.every((m) => m.status === 'ok')).toBe(true)
    expect(after.error).toMatch(/stopped before it finished/)
    serve.child.kill('SIGINT')
    expect((await serve.exited).code).toBe(0)
  })
})

const prlimit = linux && spawnSync('prlimit', ['--version']).status === 0

describe('the disk fills up mid-run', () => {
  it.skipIf(skipWithout('prlimit', prlimit, 'util-linux prlimit is not installed'))(
    'the run finishes, the CLI says it could not be saved (exit 1), the stored files stay valid and no temp file is left',
    async () => {
      const dir = tempDir('full-disk')
      // an earlier run already in the store
      const earlier = fakeRun({}, '20240101-000000-aaaaaa')
      await new RunStore(dir).save(earlier)
      // the first save (run started, ~2 KB) fits; a save with a measurement does not: EFBIG
      faults++
      const bench = spawnCli('bench', ['--preset', 'smoke', '--backend', 'wasm', '--strategies', 'sequential', '--store', dir], ['prlimit', '--fsize=2600'])
      const exit = await bench.exited
      expect(exit.code, bench.out.stderr).toBe(1)
      expect(bench.out.stdout).toMatch(/status OK/)
      expect(bench.out.stdout).toMatch(/warning: could not save the run to .*(EFBIG|too large).*kept in memory/)
      // the first write that did not fit is named: the run with its measurement, or the trained models beside it
      expect(bench.out.stderr).toMatch(/trainpool bench: --store .*: run \S+ was not saved whole: could not (save the run|keep the trained models)/)
      expect(bench.out.stderr).not.toMatch(/saved run/)
      const store = new RunStore(dir)
      expect(await store.get(earlier.runId)).toEqual(earlier)
      const entries = await store.list()
      expect(entries).toHaveLength(2)
      expect(entries.every((e) => e.status !== 'damaged')).toBe(true)
      const id = entries.find((e) => e.runId !== earlier.runId)!.runId
      // its last good save: started, no measurement (the later ones did not fit), still valid JSON
      expect((await store.get(id)).status).toBe('running')
      expect(readdirSync(join(dir, id))).toEqual(['run.json'])
      expect(existsSync(join(dir, earlier.runId, 'run.json'))).toBe(true)
    },
  )

  it.skipIf(skipWithout('prlimit', prlimit, 'util-linux prlimit is not installed'))(
    'a run that cannot be saved at all: exit 1, and no empty run folder is left',
    async () => {
      const dir = tempDir('full-disk-nothing')
      faults++
      // not even the writer lock (~100 bytes) fits
      const bench = spawnCli('bench', ['--preset', 'smoke', '--backend', 'wasm', '--strategies', 'sequential', '--store', dir], ['prlimit', '--fsize=32'])
      const exit = await bench.exited
      expect(exit.code, bench.out.stderr).toBe(1)
      expect(bench.out.stderr).toMatch(/trainpool bench: --store .*: run \S+ was not saved whole/)
      expect(readdirSync(dir).filter((name) => !name.startsWith('.'))).toEqual([])
      expect(await new RunStore(dir).list()).toEqual([])
    },
  )

  it.skipIf(skipWithout('prlimit', prlimit, 'util-linux prlimit is not installed'))(
    'bench --data whose table does not fit: exit 1, one line naming --data, nothing half-written in the data cache, no run',
    async () => {
      const dir = tempDir('full-disk-data')
      // 4 000 rows × 4 numeric columns: a 64 kB table, over the 16 kB limit (the CSV is only read)
      const csv = join(dir, 'rows.csv')
      writeFileSync(csv, ['a,b,c,y', ...Array.from({ length: 4000 }, (_, i) => `${i},${i % 7},${i / 3},${i % 11}`)].join('\n'))
      const store = join(dir, 'store')
      faults++
      const bench = spawnCli(
        'bench',
        ['--data', csv, '--target', 'y', '--preset', 'smoke', '--backend', 'wasm', '--store', store],
        ['prlimit', '--fsize=16384'],
      )
      const exit = await bench.exited
      expect(exit.code, bench.out.stderr).toBe(1)
      const lines = bench.out.stderr.trimEnd().split('\n')
      expect(lines, bench.out.stderr).toHaveLength(1)
      expect(lines[0]).toMatch(/^trainpool bench: --data .*rows\.csv: the data cache in .*\.datasets could not be written \((EFBIG|ENOSPC): /)
      expect(readdirSync(join(store, '.datasets'))).toEqual([])
      expect(await new RunStore(store).list()).toEqual([])
    },
  )
})
