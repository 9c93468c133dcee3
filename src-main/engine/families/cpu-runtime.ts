// The runtime of a family that trains in plain TypeScript on the CPU: no tfjs backend to start,
// nothing native to free. The device is the CPU model, as for the other backends.
import { cpuModel } from '../machine'
import type { WorkerRuntime } from '../backend/types'

export function plainCpuRuntime(versions: Record<string, string> = {}): WorkerRuntime {
  return {
    backend: 'cpu',
    hardware: false,
    device: cpuModel(),
    flags: { engine: 'typescript', threads: 1 },
    versions,
    memory: () => ({ numTensors: 0, numBytes: 0 }),
    heapBytes: () => null,
    release: () => {},
  }
}
