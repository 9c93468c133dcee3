import { spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { delimiter, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gpuBusyByStrategy, gpuBusyLine, NVIDIA_SMI_ABSENT_MESSAGE, RunResultSchema, type TelemetrySample } from '@shared/contract'
import { processAlive, waitUntil } from '../testing/capability'
import { NvidiaSmiReader, type NvidiaSmiTick, nvidiaSmiArgs, parseNvidiaSmiLine, parseNumberField } from './nvidia-smi'
import { parseProcStatCpuTicks, parseProcStatusRss, parsePsOutput, ProcessStats } from './process-stats'
import { TelemetrySession } from './session'

// A fake nvidia-smi: ignores its arguments, prints two GPUs every 0.2 s with some [N/A] fields,
// and records its pid so the test can check that stop() leaves no process behind.
const FAKE = `#!/bin/sh
echo $$ > "$(dirname "$0")/pid"
i=0
while true; do
  echo "0, NVIDIA H200, $((40 + i % 50)), 1024, 143771, 41, 120.50, 700.00"
  echo "1, Tesla T4, [N/A], 512, 15360, [Not Supported], [N/A], "
  i=$((i + 1))
  sleep 0.2
done
`

let dir: string
let env: NodeJS.ProcessEnv

beforeAll(() => {
  dir = mkdtempSync(join(os.tmpdir(), 'trainpool-fake-smi-'))
  writeFileSync(join(dir, 'nvidia-smi'), FAKE)
  chmodSync(join(dir, 'nvidia-smi'), 0o755)
  const { TRAINPOOL_NVIDIA_SMI: _ignored, ...rest } = process.env
  env = { ...rest, PATH: `${dir}${delimiter}${process.env.PATH ?? ''}` }
})

afterAll(() => rmSync(dir, { recursive: true, force: true }))

function readPid(): number {
  return Number(readFileSync(join(dir, 'pid'), 'utf8').trim())
}

describe('nvidia-smi parsing', () => {
  it('asks for the fields by name, CSV without header or units, looping every second', () => {
    const args = nvidiaSmiArgs()
    expect(args[0]).toBe('--query-gpu=index,name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw,power.limit')
    expect(args.slice(1)).toEqual(['--format=csv,noheader,nounits', '-l', '1'])
  })

  it('parses a line by position; [N/A], [Not Supported], empty → null', () => {
    expect(parseNvidiaSmiLine('0, NVIDIA H200, 97, 30511, 143771, 55, 512.33, 700.00')).toEqual({
      index: 0,
      name: 'NVIDIA H200',
      util: 97,
      memUsedMiB: 30511,
      memTotalMiB: 143771,
      tempC: 55,
      powerW: 512.33,
      powerLimitW: 700,
    })
    expect(parseNvidiaSmiLine('1, Tesla T4, [N/A], 512, 15360, [Not Supported], [N/A], ')).toEqual({
      index: 1,
      name: 'Tesla T4',
      util: null,
      memUsedMiB: 512,
      memTotalMiB: 15360,
      tempC: null,
      powerW: null,
      powerLimitW: null,
    })
    expect(parseNumberField('NaN')).toBeNull()
    expect(parseNumberField(' 0 ')).toBe(0)
  })

  it('ignores lines that are not GPU rows', () => {
    expect(parseNvidiaSmiLine("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")).toBeNull()
    expect(
      parseNvidiaSmiLine('index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB], temperature.gpu, power.draw [W], power.limit [W]'),
    ).toBeNull()
    expect(parseNvidiaSmiLine('0, H200, 5')).toBeNull()
  })

  it('keeps a name with a comma whole', () => {
    expect(parseNvidiaSmiLine('2, Weird, Name, 1, 2, 3, 4, 5, 6')?.name).toBe('Weird, Name')
  })
})

describe('NvidiaSmiReader with a fake nvidia-smi on PATH', () => {
  it('groups lines into ticks of 2 GPUs, maps N/A to null, and stop() kills the child', async () => {
    const ticks: NvidiaSmiTick[] = []
    const reader = new NvidiaSmiReader({ env, onTick: (t) => ticks.push(t) })
    reader.start()
    expect(await waitUntil(() => ticks.length >= 3, 10_000)).toBe(true)
    expect(reader.status.state).toBe('ok')
    expect(reader.status.message).toContain('2 GPUs')
    for (const t of ticks) expect(t.gpus.map((g) => g.index)).toEqual([0, 1])
    const [h200, t4] = ticks[ticks.length - 1].gpus
    expect(h200).toMatchObject({ name: 'NVIDIA H200', memTotalMiB: 143771, tempC: 41, powerW: 120.5, powerLimitW: 700 })
    expect(h200.util).toBeGreaterThanOrEqual(40)
    expect(t4).toMatchObject({ name: 'Tesla T4', util: null, tempC: null, powerW: null, powerLimitW: null, memUsedMiB: 512 })
    const pid = reader.pid!
    expect(readPid()).toBe(pid)
    expect(processAlive(pid)).toBe(true)
    await reader.stop()
    expect(reader.pid).toBeNull()
    expect(await waitUntil(() => !processAlive(pid), 2000)).toBe(true)
    expect(reader.status.state).toBe('ok') // stopping is not a failure
    const n = ticks.length
    await new Promise((r) => setTimeout(r, 500))
    expect(ticks.length).toBe(n)
  })

  it('honours TRAINPOOL_NVIDIA_SMI for the command', async () => {
    const reader = new NvidiaSmiReader({ env: { ...env, PATH: '/nonexistent', TRAINPOOL_NVIDIA_SMI: join(dir, 'nvidia-smi') } })
    reader.start()
    expect(await waitUntil(() => reader.latest != null, 10_000)).toBe(true)
    await reader.stop()
  })

  it('absent nvidia-smi: a clear status, no crash', async () => {
    const reader = new NvidiaSmiReader({ env: { PATH: join(dir, 'empty') } })
    reader.start()
    expect(await waitUntil(() => reader.status.state === 'absent', 5000)).toBe(true)
    expect(reader.status.message).toBe(NVIDIA_SMI_ABSENT_MESSAGE)
    expect(reader.latest).toBeNull()
    await reader.stop()
  })

  it('a child that dies: the status says so, with its last words', async () => {
    const dying = join(dir, 'dying-smi')
    writeFileSync(dying, '#!/bin/sh\necho "0, GPU X, 10, 1, 2, 3, 4, 5"\necho "NVIDIA driver went away" >&2\nexit 9\n')
    chmodSync(dying, 0o755)
    const reader = new NvidiaSmiReader({ command: dying, env })
    reader.start()
    expect(await waitUntil(() => reader.status.state === 'exited', 5000)).toBe(true)
    expect(reader.status.message).toMatch(/nvidia-smi exited \(code 9\): NVIDIA driver went away/)
    expect(reader.latest?.gpus[0].util).toBe(10)
    await reader.stop()
  })
})

describe('process stats', () => {
  it('parses /proc stat (comm with spaces and parens), status and ps output', () => {
    const stat = '1234 (we ird) (x)) R 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 12345 1000000 2500 18446744073709551615'
    expect(parseProcStatCpuTicks(stat)).toBe(300)
    expect(parseProcStatusRss('Name:\tnode\nVmPeak:\t 9000 kB\nVmRSS:\t   51200 kB\n')).toBe(51200 * 1024)
    expect(parseProcStatusRss('Name:\tzombie\nState:\tZ (zombie)\n')).toBeNull()
    const ps = parsePsOutput('  101  99.5 20480\n  102   0.0   512\n')
    expect(ps.get(101)).toEqual({ cpuPercent: 99.5, rssBytes: 20480 * 1024 })
    expect(ps.get(102)?.rssBytes).toBe(512 * 1024)
  })

  const modes = process.platform === 'linux' ? (['proc', 'ps'] as const) : process.platform === 'win32' ? ([] as const) : (['ps'] as const)
  for (const mode of modes) {
    it(`samples a busy child's CPU% and RSS, and leaves out one that exited (${mode})`, async () => {
      const child = spawn(process.execPath, ['-e', 'const a = Buffer.alloc(64 << 20, 1); for (;;) { a[Math.floor(Math.random() * a.length)]++ }'], {
        stdio: 'ignore',
      })
      try {
        const stats = new ProcessStats({ mode })
        await new Promise((r) => setTimeout(r, 300))
        const first = await stats.sample([child.pid!, 999_999_999])
        expect(first.map((s) => s.pid)).toEqual([child.pid])
        await new Promise((r) => setTimeout(r, 700))
        const [s] = await stats.sample([child.pid!])
        expect(s.pid).toBe(child.pid)
        expect(s.cpuPercent).toBeGreaterThan(3) // a busy loop; the machine may be shared, so only "clearly busy"
        expect(s.rssBytes).toBeGreaterThan(60 << 20)
      } finally {
        child.kill('SIGKILL')
        await new Promise((r) => child.once('exit', r))
      }
      const stats = new ProcessStats({ mode })
      expect(await stats.sample([child.pid!])).toEqual([])
    })
  }
})

describe('TelemetrySession', () => {
  it('combines GPU ticks, worker stats and the measurement into bounded samples, and stops the child', async () => {
    const worker = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' })
    let context: Pick<TelemetrySample, 'index' | 'strategy' | 'workerCount' | 'phase'> = {
      index: 0,
      strategy: 'sequential',
      workerCount: 1,
      phase: 'measuring',
    }
    const seen: TelemetrySample[] = []
    const session = new TelemetrySession({
      pids: () => [worker.pid!],
      context: () => context,
      intervalMs: 250,
      maxSamples: 6,
      nvidiaSmi: { env },
      onSample: (s) => seen.push(s),
    })
    try {
      session.start()
      expect(await waitUntil(() => seen.some((s) => s.gpus.length === 2), 10_000)).toBe(true)
      context = { index: 1, strategy: 'batched', workerCount: 1, phase: 'measuring' }
      expect(await waitUntil(() => seen.filter((s) => s.strategy === 'batched').length >= 8, 10_000)).toBe(true)
      const readerPid = session.readerPid!
      const data = await session.stop()
      expect(processAlive(readerPid) ? await waitUntil(() => !processAlive(readerPid), 2000) : true).toBe(true)
      expect(data.gpu.state).toBe('ok')
      expect(data.samples.length).toBeLessThanOrEqual(6)
      expect(data.intervalMs).toBeGreaterThan(250) // thinned at the cap
      const last = data.samples[data.samples.length - 1]
      expect(last.workers[0].pid).toBe(worker.pid)
      expect(last.workers[0].rssBytes).toBeGreaterThan(1 << 20)
      expect(last).toMatchObject({ index: 1, strategy: 'batched', phase: 'measuring' })
      for (let i = 1; i < data.samples.length; i++) expect(data.samples[i].t).toBeGreaterThan(data.samples[i - 1].t)
      const n = seen.length
      await new Promise((r) => setTimeout(r, 600))
      expect(seen.length).toBe(n)
    } finally {
      worker.kill('SIGKILL')
    }
  })

  it('without nvidia-smi: says so and still samples the workers', async () => {
    const session = new TelemetrySession({ pids: () => [process.pid], intervalMs: 200, nvidiaSmi: { env: { PATH: join(dir, 'empty') } } })
    session.start()
    await new Promise((r) => setTimeout(r, 700))
    const data = await session.stop()
    expect(data.gpu).toEqual({ state: 'absent', message: NVIDIA_SMI_ABSENT_MESSAGE })
    expect(data.samples.length).toBeGreaterThan(0)
    expect(data.samples.every((s) => s.gpus.length === 0)).toBe(true)
    expect(data.samples[data.samples.length - 1].workers[0].pid).toBe(process.pid)
  })
})

describe('GPU busy per strategy', () => {
  const gpu = (util: number | null, index = 0) => ({ index, name: 'G', util, memUsedMiB: 1, memTotalMiB: 2, tempC: null, powerW: null, powerLimitW: null })
  const s = (strategy: TelemetrySample['strategy'], phase: TelemetrySample['phase'], utils: (number | null)[]): TelemetrySample => ({
    t: 0,
    gpus: utils.map((u, i) => gpu(u, i)),
    workers: [],
    index: 0,
    strategy,
    workerCount: 1,
    phase,
  })

  it('averages utilisation over measuring samples only, all GPUs, in strategy order', () => {
    const samples = [
      s('batched', 'measuring', [90, 100]),
      s('batched', 'measuring', [100, 94]),
      s('batched', 'warming', [0, 0]),
      s('sequential', 'measuring', [20]),
      s('sequential', 'measuring', [26]),
      s('sequential', 'starting', [0]),
      s('pool', 'measuring', [null]),
      s(null, null, [50]),
    ]
    expect(gpuBusyByStrategy(samples)).toEqual([
      { strategy: 'sequential', meanUtil: 23, samples: 2, perGpu: [{ index: 0, meanUtil: 23 }] },
      {
        strategy: 'batched',
        meanUtil: 96,
        samples: 2,
        perGpu: [
          { index: 0, meanUtil: 95 },
          { index: 1, meanUtil: 97 },
        ],
      },
    ])
    // per GPU where several reported: a spread over GPUs shows whether each one worked
    expect(gpuBusyLine(samples)).toBe('GPU busy 23 % in sequential, 96 % in batched (GPU 0 95 %, GPU 1 97 %)')
  })

  it('is null without GPU utilisation', () => {
    expect(gpuBusyLine([s('sequential', 'measuring', [])])).toBeNull()
    expect(gpuBusyLine([])).toBeNull()
  })
})

describe('result schema', () => {
  it('telemetry is optional on a stored run and validated when present', () => {
    const shape = RunResultSchema.shape
    expect(shape.telemetry.safeParse(undefined).success).toBe(true)
    expect(shape.telemetry.safeParse({ intervalMs: 1000, maxSamples: 10, gpu: { state: 'absent', message: 'm' }, samples: [] }).success).toBe(true)
    expect(shape.telemetry.safeParse({ intervalMs: 1000, maxSamples: 10, gpu: { state: 'nope', message: 'm' }, samples: [] }).success).toBe(false)
  })
})
