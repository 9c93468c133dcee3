// The `xgboost` backend as a worker runtime: which library, which device, how many threads.
// TRAINPOOL_XGBOOST_DEVICE = auto | cpu | cuda | cuda:N (auto: cuda when the build has CUDA and
// there is an NVIDIA GPU); nthread = ⌊cores ÷ W⌋ per worker (TRAINPOOL_XGBOOST_NTHREAD overrides),
// since XGBoost otherwise takes every core in every process. More: ../README.md, "xgboost/".
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import type { BackendCapability } from '@shared/contract'
import { BackendUnavailableError, type WorkerRuntime } from '../backend/types'
import { koffiVersion, loadXgboost, type XgbLibrary, XGBoostNotFoundError } from './library'

export type XgbDevice = { kind: 'cpu' } | { kind: 'cuda'; ordinal: number | null }

export interface XgboostRuntime extends WorkerRuntime {
  backend: 'xgboost'
  xgb: { lib: XgbLibrary; device: XgbDevice; nthread: number }
}

export function isXgboostRuntime(runtime: WorkerRuntime): runtime is XgboostRuntime {
  return runtime.backend === 'xgboost' && 'xgb' in runtime
}

export const DEVICE_CHOICES = 'auto, cpu, cuda, cuda:N'

/** The NVIDIA GPUs the driver exposes here (names when it says them); empty without one. */
export function nvidiaGpus(): string[] {
  const dir = '/proc/driver/nvidia/gpus'
  try {
    const names = readdirSync(dir).map((bus) => {
      try {
        const m = /^Model:\s*(.+)$/m.exec(readFileSync(join(dir, bus, 'information'), 'utf8'))
        return m ? m[1].trim() : `NVIDIA GPU ${bus}`
      } catch {
        return `NVIDIA GPU ${bus}`
      }
    })
    if (names.length) return names
  } catch {
    /* no NVIDIA driver, or not Linux */
  }
  return existsSync('/dev/nvidia0') ? ['NVIDIA GPU (/dev/nvidia0)'] : []
}

/** The device a run gets, or an Error naming why the one asked for cannot be had. */
export function resolveDevice(request: string | undefined, lib: Pick<XgbLibrary, 'cuda' | 'version' | 'path'>, gpus: readonly string[]): XgbDevice {
  const asked = (request ?? '').trim().toLowerCase() || 'auto'
  const m = /^cuda(?::(\d+))?$/.exec(asked)
  if (asked === 'cpu') return { kind: 'cpu' }
  if (asked === 'auto') return lib.cuda && gpus.length > 0 ? { kind: 'cuda', ordinal: null } : { kind: 'cpu' }
  if (!m) throw new Error(`TRAINPOOL_XGBOOST_DEVICE=${request} is not a device; accepted: ${DEVICE_CHOICES}`)
  if (!lib.cuda) {
    throw new Error(
      `TRAINPOOL_XGBOOST_DEVICE=${request} asks for CUDA, but ${lib.path} (XGBoost ${lib.version}) was built without CUDA (XGBuildInfo: USE_CUDA false): ` +
        'use a CUDA build (`pip install xgboost` on Linux x86-64, then TRAINPOOL_XGBOOST_LIB=…/xgboost/lib/libxgboost.so) or TRAINPOOL_XGBOOST_DEVICE=cpu',
    )
  }
  if (gpus.length === 0)
    throw new Error(
      `TRAINPOOL_XGBOOST_DEVICE=${request} asks for CUDA, but this machine shows no NVIDIA GPU (no /proc/driver/nvidia/gpus, no /dev/nvidia0): use TRAINPOOL_XGBOOST_DEVICE=cpu`,
    )
  const ordinal = m[1] === undefined ? null : Number(m[1])
  if (ordinal !== null && ordinal >= gpus.length)
    throw new Error(`TRAINPOOL_XGBOOST_DEVICE=${request}: this machine has ${gpus.length} NVIDIA GPU(s), numbered from 0`)
  return { kind: 'cuda', ordinal }
}

export function cores(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length
}

/** nthread for one worker: TRAINPOOL_XGBOOST_NTHREAD, else ⌊cores ÷ W⌋ with W = TRAINPOOL_POOL_WORKERS (default 1), at least 1. */
export function nthreadFor(env: NodeJS.ProcessEnv, coreCount = cores()): { nthread: number; rule: string } {
  const fixed = env.TRAINPOOL_XGBOOST_NTHREAD
  if (fixed !== undefined && fixed !== '') {
    const n = Number(fixed)
    if (!Number.isInteger(n) || n < 1 || n > 1024) throw new Error(`TRAINPOOL_XGBOOST_NTHREAD=${fixed} is not valid: an integer from 1 to 1024`)
    return { nthread: n, rule: `TRAINPOOL_XGBOOST_NTHREAD=${n}` }
  }
  const w = Number(env.TRAINPOOL_POOL_WORKERS)
  const workers = Number.isInteger(w) && w >= 1 ? w : 1
  return { nthread: Math.max(1, Math.floor(coreCount / workers)), rule: `cores ÷ W = ${coreCount} ÷ ${workers}` }
}

function deviceText(device: XgbDevice, gpus: readonly string[]): string {
  if (device.kind === 'cpu') {
    const cpus = os.cpus()
    return `${cpus[0]?.model?.trim() || os.arch()} (${cpus.length} cores)`
  }
  return `${gpus[device.ordinal ?? 0] ?? 'NVIDIA GPU'} (CUDA${device.ordinal === null ? '' : `:${device.ordinal}`})`
}

function libraryText(lib: XgbLibrary): string {
  return `XGBoost ${lib.version} (${lib.cuda ? 'CUDA build' : 'CPU build'}) from ${lib.path}`
}

function reasonOf(err: unknown): string {
  return err instanceof XGBoostNotFoundError ? err.reason : err instanceof Error ? err.message : String(err)
}

/** Starts the backend in this (worker) process: library, device, threads. Throws BackendUnavailableError with the reason. */
export function startXgboostRuntime(env: NodeJS.ProcessEnv = process.env): XgboostRuntime {
  let lib: XgbLibrary
  let device: XgbDevice
  let nthread: { nthread: number; rule: string }
  const gpus = nvidiaGpus()
  try {
    lib = loadXgboost(env)
    device = resolveDevice(env.TRAINPOOL_XGBOOST_DEVICE, lib, gpus)
    nthread = nthreadFor(env)
  } catch (err) {
    throw new BackendUnavailableError('xgboost', reasonOf(err))
  }
  return {
    backend: 'xgboost',
    hardware: device.kind === 'cuda',
    device: `${deviceText(device, gpus)}, ${libraryText(lib)}`,
    flags: {
      xgboostLibrary: lib.path,
      xgboostSource: lib.source,
      xgboostCuda: lib.cuda,
      xgboostDevice: device.kind === 'cpu' ? 'cpu' : device.ordinal === null ? 'cuda' : `cuda:${device.ordinal}`,
      nthread: nthread.nthread,
      nthreadRule: nthread.rule,
      // libgomp's waiting at barriers, as loaded (library.ts: PASSIVE unless the user set one)
      OMP_WAIT_POLICY: lib.ompWaitPolicy,
    },
    versions: { xgboost: lib.version, koffi: koffiVersion() },
    xgb: { lib, device, nthread: nthread.nthread },
    memory: () => ({ numTensors: 0, numBytes: 0 }),
    heapBytes: () => null,
    release: () => {},
  }
}

/** The probe's entry: available with the library, version, CUDA and device; or why not and how to get it. */
export function probeXgboost(env: NodeJS.ProcessEnv = process.env): BackendCapability {
  try {
    const rt = startXgboostRuntime(env)
    return { name: 'xgboost', available: true, gpu: rt.xgb.device.kind === 'cuda', detail: rt.device }
  } catch (err) {
    return { name: 'xgboost', available: false, gpu: false, detail: err instanceof BackendUnavailableError ? err.reason : reasonOf(err) }
  }
}
