// The machine's NVIDIA GPUs, as nvidia-smi lists them (the tool the telemetry already reads):
// index, UUID, name and memory. A machine without nvidia-smi has none (an empty list, never an
// error). TRAINPOOL_NVIDIA_SMI names another command (the tests' fake with two GPUs).
import { execFile } from 'node:child_process'
import type { GpuInfo } from '@shared/contract'

const QUERY = ['--query-gpu=index,uuid,name,memory.total', '--format=csv,noheader,nounits']

/** The nvidia-smi to run (discovery and the telemetry alike): TRAINPOOL_NVIDIA_SMI, else the one on PATH. */
export function nvidiaSmiCommand(env: NodeJS.ProcessEnv = process.env): string {
  return env.TRAINPOOL_NVIDIA_SMI ?? 'nvidia-smi'
}

/** Parses nvidia-smi's CSV (index, uuid, name, memory.total in MiB), one GPU per line. */
export function parseGpuList(text: string): GpuInfo[] {
  return text
    .split('\n')
    .map((line) => line.split(',').map((c) => c.trim()))
    .filter((cells) => cells.length >= 4 && /^\d+$/.test(cells[0]))
    .map(([index, uuid, name, memory]) => ({ index: Number(index), uuid, name, memoryMiB: Number(memory) || 0 }))
}

/** The GPUs nvidia-smi lists; [] without nvidia-smi or when it fails (no driver). */
export function discoverGpus(command = nvidiaSmiCommand()): Promise<GpuInfo[]> {
  return new Promise((resolve) => {
    execFile(command, QUERY, { timeout: 10_000, encoding: 'utf8' }, (err, stdout) => resolve(err ? [] : parseGpuList(stdout)))
  })
}
