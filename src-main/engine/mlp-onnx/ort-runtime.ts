// The `onnxruntime` backend's runtime: onnxruntime-node (ONNX Runtime's CPU execution provider,
// shipped as N-API binaries in the npm package) loaded in a worker process, never in main. Where it
// is missing or cannot load, the reason is what the probe reports and `auto` moves on. One
// intra-op thread per session, no spinning: the pool's processes are the parallelism (README.md,
// "Threads"; packaging: "Install, fallback, packaging").
import { createRequire } from 'node:module'
import type * as Ort from 'onnxruntime-node'
import { onnx } from 'onnx-proto'
import type { BackendCapability } from '@shared/contract'
import { BackendUnavailableError, type WorkerRuntime } from '../backend/types'
import { cpuModel, packageVersion } from '../machine'

const require = createRequire(__filename)

export type OrtModule = typeof Ort

/** Session options every Trainpool session gets: one core, no busy-waiting, full graph optimisation. */
export const SESSION_OPTIONS: Ort.InferenceSession.SessionOptions = {
  executionProviders: ['cpu'],
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
  enableCpuMemArena: true,
  enableMemPattern: true,
  extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
}

export const ORT_FLAGS = {
  executionProvider: 'cpu',
  intraOpThreads: 1,
  interOpThreads: 1,
  allowSpinning: false,
  graphOptimizationLevel: 'all',
} as const

let loaded: OrtModule | null = null

/** Loads onnxruntime-node, or throws BackendUnavailableError saying why it could not. */
export function loadOrt(): OrtModule {
  if (loaded) return loaded
  try {
    require.resolve('onnxruntime-node')
  } catch {
    throw new BackendUnavailableError(
      'onnxruntime',
      'onnxruntime-node is not installed (an optional dependency with CPU binaries for Linux/Windows x64 and arm64 and macOS arm64; run npm install on a supported platform)',
    )
  }
  try {
    loaded = require('onnxruntime-node') as OrtModule
  } catch (err) {
    throw new BackendUnavailableError('onnxruntime', `onnxruntime-node failed to load its native library: ${(err as Error).message.split('\n')[0]}`)
  }
  return loaded
}

export function ortVersion(): string {
  return packageVersion('onnxruntime-node')
}

export interface OnnxRuntime extends WorkerRuntime {
  backend: 'onnxruntime'
  ort: OrtModule
  /** sessions by graph key, created once per worker (creating one costs ~30 ms) */
  sessions: Map<string, Promise<Ort.InferenceSession>>
}

export function isOnnxRuntime(rt: WorkerRuntime): rt is OnnxRuntime {
  return rt.backend === 'onnxruntime'
}

const device = () => `${cpuModel()}, ONNX Runtime CPU (MLAS), 1 thread per worker`

/** Starts the backend in this worker: loads the addon and proves it can run a session. */
export async function startOnnxRuntime(): Promise<OnnxRuntime> {
  const ort = loadOrt()
  await selfTest(ort)
  const sessions = new Map<string, Promise<Ort.InferenceSession>>()
  let released = false
  return {
    backend: 'onnxruntime',
    hardware: false,
    ort,
    sessions,
    device: device(),
    flags: { ...ORT_FLAGS },
    versions: { 'onnxruntime-node': ortVersion(), 'onnx-proto': packageVersion('onnx-proto') },
    memory: () => ({ numTensors: 0, numBytes: 0 }),
    heapBytes: () => null,
    release: () => {
      if (released) return
      released = true
      for (const s of sessions.values()) void s.then((session) => session.release()).catch(() => {})
      sessions.clear()
    },
  }
}

/** A session of the given model bytes, cached in the runtime under `key`. */
export function sessionFor(rt: OnnxRuntime, key: string, model: () => Uint8Array): Promise<Ort.InferenceSession> {
  let s = rt.sessions.get(key)
  if (!s) {
    s = rt.ort.InferenceSession.create(model(), SESSION_OPTIONS)
    s.catch(() => rt.sessions.delete(key))
    rt.sessions.set(key, s)
  }
  return s
}

/** 1×1 Identity: the addon loads AND its CPU provider runs (a broken install fails here, not mid-run). */
async function selfTest(ort: OrtModule): Promise<void> {
  const vi = (name: string) => ({ name, type: { tensorType: { elemType: onnx.TensorProto.DataType.FLOAT, shape: { dim: [{ dimValue: 1 }] } } } })
  const bytes = onnx.ModelProto.encode(
    onnx.ModelProto.create({
      irVersion: 8,
      opsetImport: [{ domain: '', version: 13 }],
      graph: { name: 'probe', node: [{ opType: 'Identity', input: ['a'], output: ['b'] }], input: [vi('a')], output: [vi('b')] },
    }),
  ).finish()
  try {
    const session = await ort.InferenceSession.create(bytes, SESSION_OPTIONS)
    const out = await session.run({ a: new ort.Tensor('float32', new Float32Array([3]), [1]) })
    await session.release()
    if ((out.b.data as Float32Array)[0] !== 3) throw new Error('a 1×1 Identity returned the wrong value')
  } catch (err) {
    throw new BackendUnavailableError('onnxruntime', `onnxruntime-node loaded but could not run a session: ${(err as Error).message.split('\n')[0]}`)
  }
}

/** The probe's entry: available (with the device) or the reason it could not load. */
export async function probeOnnxRuntime(): Promise<BackendCapability> {
  try {
    const rt = await startOnnxRuntime()
    rt.release()
    return { name: 'onnxruntime', available: true, gpu: false, detail: `${rt.device}, onnxruntime-node ${ortVersion()}` }
  } catch (err) {
    return { name: 'onnxruntime', available: false, gpu: false, detail: err instanceof BackendUnavailableError ? err.reason : (err as Error).message }
  }
}
