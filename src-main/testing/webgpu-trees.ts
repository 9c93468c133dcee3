// The WGSL trees engine's tests (engine/gbdt-webgpu/*.test.ts): one device per test file (skipped
// only without an adapter, a failure under TRAINPOOL_REQUIRE=webgpu), small seeded data sets, the CPU engine's hashes.
import { prepareGbdtData, trainGbdtGroup, treeHash, type GbdtData, type GbdtParams } from '../engine/gbdt'
import { Rng } from '../engine/random'
import { skipWithout } from './capability'
import { BackendUnavailableError } from '../engine/backend/types'
import { openWgslDevice, type WgslDevice } from '../engine/webgpu/device'

export interface DeviceHolder {
  gpu: WgslDevice | null
  why: string
}

/** Opens the device (beforeAll); `null` with the reason when there is no adapter. */
export async function openForTests(): Promise<DeviceHolder> {
  try {
    return { gpu: await openWgslDevice('trainpool-gbdt'), why: '' }
  } catch (err) {
    if (err instanceof BackendUnavailableError) return { gpu: null, why: err.reason }
    throw err
  }
}

/** true → the test should skip (no adapter, and TRAINPOOL_REQUIRE does not list webgpu) */
export function noDevice(h: DeviceHolder): boolean {
  return skipWithout('webgpu', h.gpu !== null, `no WebGPU adapter: ${h.why}`)
}

export interface DataSpec {
  rows: number
  features: number
  seed?: number
  maxBin?: number
  /** feature f → its value from a standard normal draw v and the row */
  value?: (f: number, v: number, r: number) => number
  /** label from the row's features */
  label?: (xs: Float32Array, r: number, rng: Rng) => number
}

/** A seeded data set: by default continuous features, a few discrete ones and a smooth label with noise. */
export function makeData(spec: DataSpec): { data: GbdtData; x: Float32Array; y: Float32Array } {
  const { rows, features } = spec
  const rng = new Rng(spec.seed ?? 1)
  const x = new Float32Array(rows * features)
  const y = new Float32Array(rows)
  for (let r = 0; r < rows; r++) {
    for (let f = 0; f < features; f++) {
      const v = rng.normal()
      x[r * features + f] = spec.value ? spec.value(f, v, r) : f % 3 === 2 ? Math.round(v * 2) : v
    }
    const xs = x.subarray(r * features, (r + 1) * features)
    if (spec.label) y[r] = spec.label(xs, r, rng)
    else {
      let s = 0
      xs.forEach((v, f) => (s += Number.isNaN(v) ? 0.3 : v * ((f % 4) + 1) * 0.5))
      const x0 = xs[0]
      y[r] = Math.sin(s) + 0.5 * Math.tanh(Number.isNaN(x0) ? -1 : x0) + 0.1 * rng.normal()
    }
  }
  return { data: prepareGbdtData(x, y, rows, features, spec.maxBin ?? 256), x, y }
}

/** The CPU engine's tree hash of each seed's model (each trained alone, as sequential does). */
export function cpuHashes(data: GbdtData, params: Partial<GbdtParams>, seeds: readonly number[]): string[] {
  return seeds.map((s) => treeHash(trainGbdtGroup(data, params, [s])[0]))
}
