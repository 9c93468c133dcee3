// Running the real `trainpool` CLI from sources in tests, with its output captured, and finding
// its worker processes.
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { resolve } from 'node:path'
import { fakeRendererDir } from './http'

const cliEntry = resolve(__dirname, '..', 'cli', 'index.ts')

export interface CliProcess {
  child: ChildProcess
  out: { stdout: string; stderr: string }
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Spawned CLIs still running; `killAll()` in afterEach. */
const running: ChildProcess[] = []

/** `trainpool <command> <args…>` (optionally behind a wrapper such as `prlimit …`; `env` added to this process's, undefined removes). */
export function spawnCli(command: string, args: string[], wrapper: string[] = [], env: Record<string, string | undefined> = {}): CliProcess {
  const argv = [...wrapper, process.execPath, '--import', 'tsx', cliEntry, command, ...args]
  const child = spawn(argv[0], argv.slice(1), {
    env: { ...process.env, TRAINPOOL_RENDERER_DIR: fakeRendererDir().dir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.push(child)
  const out = { stdout: '', stderr: '' }
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out.stdout += c))
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (out.stderr += c))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })))
  return { child, out, exited }
}

export function killAll(): void {
  for (const c of running.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
}

/** Linux: the direct children of a process (a CLI's workers); [] elsewhere. */
export function childrenOf(pid: number): number[] {
  if (process.platform !== 'linux') return []
  const out: number[] = []
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue
    try {
      const stat = readFileSync(`/proc/${n}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(n))
    } catch {
      /* gone */
    }
  }
  return out
}
