// Finding and binding the user's own XGBoost (libxgboost) through koffi, in worker processes only:
// XGBoost starts OpenMP, and a process forked after that deadlocks in training. Lookup:
// TRAINPOOL_XGBOOST_LIB (no fallback when set) → the `xgboost` Python package of `python3` on PATH →
// the system's libxgboost.so.0. Every failing call throws an XGBoostError with XGBGetLastError().
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type * as KoffiModule from 'koffi'

type Koffi = typeof KoffiModule
/** koffi 3 passes native pointers as BigInt */
export type Handle = bigint

const require = createRequire(__filename)

/** A failing XGBoost C API call, with the library's own message (XGBGetLastError). */
export class XGBoostError extends Error {
  constructor(
    readonly call: string,
    readonly lastError: string,
  ) {
    super(`XGBoost ${call} failed: ${lastError}`)
    this.name = 'XGBoostError'
  }
}

/** No usable XGBoost library here; `reason` says what was tried and how to get one. */
export class XGBoostNotFoundError extends Error {
  constructor(readonly reason: string) {
    super(reason)
    this.name = 'XGBoostNotFoundError'
  }
}

export const HOW_TO_GET_XGBOOST =
  'install it: `apt-get install libxgboost0` (Debian/Ubuntu), or `pip install xgboost` and set TRAINPOOL_XGBOOST_LIB to its lib/libxgboost.so'

export type LibrarySource = 'TRAINPOOL_XGBOOST_LIB' | 'python' | 'system'

/** The C API calls Trainpool uses, each throwing XGBoostError on a non-zero return. */
export interface XgbApi {
  version(): [number, number, number]
  buildInfo(): Record<string, unknown>
  /** row-major float32, NaN = missing */
  dmatrixFromDense(data: Float32Array, rows: number, cols: number, nthread: number): Handle
  setLabels(dmatrix: Handle, labels: Float32Array): void
  freeDMatrix(dmatrix: Handle): void
  createBooster(dmatrices: readonly Handle[]): Handle
  setParam(booster: Handle, name: string, value: string): void
  updateOneIter(booster: Handle, iteration: number, dtrain: Handle): void
  /** the objective's predictions of every row (a classifier's probabilities: `outputs` a row, row-major), copied out of XGBoost's buffer */
  predict(booster: Handle, dmatrix: Handle, rows: number, outputs?: number): Float32Array
  /** a new booster of the first `rounds` rounds of `booster` (XGBoosterSlice: every tree of those rounds, the same objective and base score) */
  slice(booster: Handle, rounds: number): Handle
  /** the model as JSON bytes (copied) */
  saveModelJson(booster: Handle): Buffer
  /** replaces the booster's model with one XGBoost saved (XGBoosterLoadModelFromBuffer: JSON or UBJ bytes) */
  loadModel(booster: Handle, model: Buffer): void
  /** the rounds the booster's model has (XGBoosterBoostedRounds) */
  boostedRounds(booster: Handle): number
  freeBooster(booster: Handle): void
}

export interface XgbLibrary {
  api: XgbApi
  /** the file the dynamic linker loaded */
  path: string
  source: LibrarySource
  version: string
  major: number
  /** built with CUDA (XGBuildInfo USE_CUDA) */
  cuda: boolean
  /** OMP_WAIT_POLICY as the library's OpenMP read it when it was loaded (see ompWaitPolicyForLoad) */
  ompWaitPolicy: string
}

/**
 * libgomp reads OMP_WAIT_POLICY once, when it is loaded (with libxgboost). Unset, its threads spin
 * at every barrier for the thread that has no core, and a worker at nthread > 1 next to the app's
 * own process and other work ran several times slower: 6.3 s against 0.8 s with PASSIVE for the
 * smoke preset's sequential run at load 3 on 2 cores; idle, PASSIVE cost 1.5 % wall and saved 8 % CPU
 * (farm-bench, 5 pairs, 10 000 rows × 4 models × 30 rounds). So a worker
 * loads XGBoost with PASSIVE unless the user set a policy; the result's backend flags record it.
 */
export function ompWaitPolicyForLoad(env: NodeJS.ProcessEnv = process.env): string {
  if (!env.OMP_WAIT_POLICY) env.OMP_WAIT_POLICY = 'PASSIVE'
  return env.OMP_WAIT_POLICY
}

const loaded = new Map<string, XgbLibrary>()

/** Loads koffi itself; a failure means no FFI on this platform (no prebuilt binary). */
function loadKoffi(): Koffi {
  try {
    return require('koffi') as Koffi
  } catch (err) {
    throw new XGBoostNotFoundError(
      `the FFI package koffi failed to load (no prebuilt binary for ${process.platform}-${process.arch}?): ${(err as Error).message}`,
    )
  }
}

export function koffiVersion(): string {
  try {
    return (require('koffi') as { version: string }).version
  } catch {
    return 'unknown'
  }
}

/** The part of XGBoost's message worth showing: its text without the native stack trace. */
function cleanMessage(text: string | null): string {
  const t = (text ?? '').split(/\nStack trace:/)[0].trim()
  return t || '(XGBGetLastError returned nothing)'
}

type NativeCall = KoffiModule.KoffiFunc<(...args: unknown[]) => number>

/** Binds the calls on an opened library; throws when a symbol is missing (not an XGBoost library). */
function bind(koffi: Koffi, lib: KoffiModule.LibraryHandle): XgbApi {
  return new BoundXgb(koffi, (definition) => lib.func(definition) as NativeCall)
}

const out = <T>(): [T] => [null as T]

/** XGBoost's C API as XgbApi: each call checked, its error said in XGBoost's words. */
class BoundXgb implements XgbApi {
  private readonly lastError: NativeCall
  private readonly XGBoostVersion: NativeCall
  private readonly XGBuildInfo: NativeCall
  private readonly XGDMatrixCreateFromMat: NativeCall
  /** takes nthread (the plain call uses every core); present in 1.x and 2.x, null in a build without it */
  private readonly XGDMatrixCreateFromMatOmp: NativeCall | null
  private readonly XGDMatrixSetFloatInfo: NativeCall
  private readonly XGDMatrixFree: NativeCall
  private readonly XGBoosterCreate: NativeCall
  private readonly XGBoosterSetParam: NativeCall
  private readonly XGBoosterUpdateOneIter: NativeCall
  private readonly XGBoosterPredictFromDMatrix: NativeCall
  private readonly XGBoosterSaveModelToBuffer: NativeCall
  private readonly XGBoosterSlice: NativeCall
  private readonly XGBoosterLoadModelFromBuffer: NativeCall
  private readonly XGBoosterBoostedRounds: NativeCall
  private readonly XGBoosterFree: NativeCall

  constructor(
    private readonly koffi: Koffi,
    fn: (definition: string) => NativeCall,
  ) {
    this.lastError = fn('const char *XGBGetLastError()')
    this.XGBoostVersion = fn('void XGBoostVersion(_Out_ int *major, _Out_ int *minor, _Out_ int *patch)')
    this.XGBuildInfo = fn('int XGBuildInfo(_Out_ const char **out)')
    this.XGDMatrixCreateFromMat = fn('int XGDMatrixCreateFromMat(const float *data, uint64_t nrow, uint64_t ncol, float missing, _Out_ void **out)')
    let omp: NativeCall | null = null
    try {
      omp = fn('int XGDMatrixCreateFromMat_omp(const float *data, uint64_t nrow, uint64_t ncol, float missing, _Out_ void **out, int nthread)')
    } catch {
      /* a build without it: the plain call */
    }
    this.XGDMatrixCreateFromMatOmp = omp
    this.XGDMatrixSetFloatInfo = fn('int XGDMatrixSetFloatInfo(void *handle, const char *field, const float *array, uint64_t len)')
    this.XGDMatrixFree = fn('int XGDMatrixFree(void *handle)')
    this.XGBoosterCreate = fn('int XGBoosterCreate(void **dmats, uint64_t len, _Out_ void **out)')
    this.XGBoosterSetParam = fn('int XGBoosterSetParam(void *handle, const char *name, const char *value)')
    this.XGBoosterUpdateOneIter = fn('int XGBoosterUpdateOneIter(void *handle, int iter, void *dtrain)')
    this.XGBoosterPredictFromDMatrix = fn(
      'int XGBoosterPredictFromDMatrix(void *handle, void *dmat, const char *config, _Out_ uint64_t **out_shape, _Out_ uint64_t *out_dim, _Out_ void **out_result)',
    )
    this.XGBoosterSaveModelToBuffer = fn('int XGBoosterSaveModelToBuffer(void *handle, const char *config, _Out_ uint64_t *out_len, _Out_ void **out_dptr)')
    this.XGBoosterSlice = fn('int XGBoosterSlice(void *handle, int begin_layer, int end_layer, int step, _Out_ void **out)')
    this.XGBoosterLoadModelFromBuffer = fn('int XGBoosterLoadModelFromBuffer(void *handle, const void *buf, uint64_t len)')
    this.XGBoosterBoostedRounds = fn('int XGBoosterBoostedRounds(void *handle, _Out_ int *out)')
    this.XGBoosterFree = fn('int XGBoosterFree(void *handle)')
  }

  private check(call: string, rc: number): void {
    if (rc !== 0) throw new XGBoostError(call, cleanMessage(this.lastError() as unknown as string | null))
  }

  version(): [number, number, number] {
    const [a, b, c] = [[0], [0], [0]]
    this.XGBoostVersion(a, b, c)
    return [a[0], b[0], c[0]]
  }

  buildInfo(): Record<string, unknown> {
    const info = out<string>()
    this.check('XGBuildInfo', this.XGBuildInfo(info))
    return JSON.parse(info[0]) as Record<string, unknown>
  }

  dmatrixFromDense(data: Float32Array, rows: number, cols: number, nthread: number): Handle {
    if (data.length !== rows * cols) throw new RangeError(`dense matrix has ${data.length} values, expected ${rows} × ${cols}`)
    const h = out<Handle>()
    if (this.XGDMatrixCreateFromMatOmp) this.check('XGDMatrixCreateFromMat_omp', this.XGDMatrixCreateFromMatOmp(data, rows, cols, NaN, h, nthread))
    else this.check('XGDMatrixCreateFromMat', this.XGDMatrixCreateFromMat(data, rows, cols, NaN, h))
    return h[0]
  }

  setLabels(dmatrix: Handle, labels: Float32Array): void {
    this.check('XGDMatrixSetFloatInfo', this.XGDMatrixSetFloatInfo(dmatrix, 'label', labels, labels.length))
  }

  freeDMatrix(dmatrix: Handle): void {
    this.check('XGDMatrixFree', this.XGDMatrixFree(dmatrix))
  }

  createBooster(dmatrices: readonly Handle[]): Handle {
    const h = out<Handle>()
    this.check('XGBoosterCreate', this.XGBoosterCreate([...dmatrices], dmatrices.length, h))
    return h[0]
  }

  setParam(booster: Handle, name: string, value: string): void {
    this.check(`XGBoosterSetParam(${name}=${value})`, this.XGBoosterSetParam(booster, name, value))
  }

  updateOneIter(booster: Handle, iteration: number, dtrain: Handle): void {
    this.check('XGBoosterUpdateOneIter', this.XGBoosterUpdateOneIter(booster, iteration, dtrain))
  }

  predict(booster: Handle, dmatrix: Handle, rows: number, outputs = 1): Float32Array {
    const shape = out<Handle>()
    const dim = [0]
    const result = out<Handle>()
    const config = '{"type":0,"training":false,"iteration_begin":0,"iteration_end":0,"strict_shape":false}'
    this.check('XGBoosterPredictFromDMatrix', this.XGBoosterPredictFromDMatrix(booster, dmatrix, config, shape, dim, result))
    const dims = this.koffi.decode(shape[0], 'uint64_t', dim[0]) as ArrayLike<number | bigint>
    let n = 1
    for (let i = 0; i < dim[0]; i++) n *= Number(dims[i])
    if (n !== rows * outputs)
      throw new XGBoostError('XGBoosterPredictFromDMatrix', `returned ${n} predictions for ${rows} rows${outputs > 1 ? ` × ${outputs} classes` : ''}`)
    // the booster owns the buffer until its next call: copy it out now
    return new Float32Array(this.koffi.view(result[0], n * 4).slice(0))
  }

  slice(booster: Handle, rounds: number): Handle {
    const h = out<Handle>()
    this.check('XGBoosterSlice', this.XGBoosterSlice(booster, 0, rounds, 1, h))
    return h[0]
  }

  saveModelJson(booster: Handle): Buffer {
    const len = [0]
    const ptr = out<Handle>()
    this.check('XGBoosterSaveModelToBuffer', this.XGBoosterSaveModelToBuffer(booster, '{"format":"json"}', len, ptr))
    return Buffer.from(this.koffi.view(ptr[0], Number(len[0])).slice(0))
  }

  loadModel(booster: Handle, model: Buffer): void {
    this.check('XGBoosterLoadModelFromBuffer', this.XGBoosterLoadModelFromBuffer(booster, model, model.length))
  }

  boostedRounds(booster: Handle): number {
    const rounds = [0]
    this.check('XGBoosterBoostedRounds', this.XGBoosterBoostedRounds(booster, rounds))
    return rounds[0]
  }

  freeBooster(booster: Handle): void {
    this.check('XGBoosterFree', this.XGBoosterFree(booster))
  }
}

/** The file the dynamic linker mapped for a library loaded by name (Linux: /proc/self/maps). */
function mappedPath(fragment: string): string | null {
  try {
    for (const line of readFileSync('/proc/self/maps', 'utf8').split('\n')) {
      const i = line.indexOf('/')
      if (i >= 0 && line.includes(fragment)) return line.slice(i).trim()
    }
  } catch {
    /* not Linux */
  }
  return null
}

function open(koffi: Koffi, file: string, source: LibrarySource): XgbLibrary {
  const cached = loaded.get(file)
  if (cached) return cached
  const ompWaitPolicy = ompWaitPolicyForLoad()
  const lib = koffi.load(file)
  let api: XgbApi
  try {
    api = bind(koffi, lib)
  } catch (err) {
    throw new Error(`${file} is not an XGBoost library (${(err as Error).message})`)
  }
  const [major, minor, patch] = api.version()
  const info = api.buildInfo()
  const path = file.includes('/') || file.includes('\\') ? file : (mappedPath('libxgboost') ?? file)
  const found: XgbLibrary = { api, path, source, version: `${major}.${minor}.${patch}`, major, cuda: info.USE_CUDA === true, ompWaitPolicy }
  loaded.set(file, found)
  return found
}

/** File names of the library in a Python package's lib/ and on the system, per platform. */
function fileNames(): { pythonLib: string[]; system: string[] } {
  if (process.platform === 'darwin') return { pythonLib: ['libxgboost.dylib'], system: ['libxgboost.dylib'] }
  if (process.platform === 'win32') return { pythonLib: ['xgboost.dll'], system: ['xgboost.dll'] }
  return { pythonLib: ['libxgboost.so'], system: ['libxgboost.so.0', 'libxgboost.so'] }
}

/** The `xgboost` package's lib/ folder for an interpreter, found without importing xgboost. */
export function pythonXgboostLibDir(python: string): string | null {
  const code =
    'import importlib.util as u, os\ns = u.find_spec("xgboost")\nprint(os.path.join(list(s.submodule_search_locations)[0], "lib") if s and s.submodule_search_locations else "")'
  const r = spawnSync(python, ['-c', code], { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'ignore'] })
  const dir = r.status === 0 ? r.stdout.trim() : ''
  return dir && existsSync(dir) ? dir : null
}

/**
 * Finds and opens libxgboost (cached per process). Throws XGBoostNotFoundError with every place
 * tried and how to get the library.
 */
export function loadXgboost(env: NodeJS.ProcessEnv = process.env): XgbLibrary {
  const explicit = env.TRAINPOOL_XGBOOST_LIB
  if (explicit) {
    if (!existsSync(explicit)) throw new XGBoostNotFoundError(`TRAINPOOL_XGBOOST_LIB=${explicit}: no such file; ${HOW_TO_GET_XGBOOST}`)
    if (statSync(explicit).isDirectory())
      throw new XGBoostNotFoundError(`TRAINPOOL_XGBOOST_LIB=${explicit} is a folder: point it at the library file itself (…/xgboost/lib/libxgboost.so)`)
    const koffi = loadKoffi()
    try {
      return open(koffi, explicit, 'TRAINPOOL_XGBOOST_LIB')
    } catch (err) {
      throw new XGBoostNotFoundError(`TRAINPOOL_XGBOOST_LIB=${explicit} is not a loadable XGBoost library: ${(err as Error).message.trim()}`)
    }
  }
  const koffi = loadKoffi()
  const tried: string[] = []
  const names = fileNames()
  const python = env.TRAINPOOL_PYTHON || 'python3'
  const dir = pythonXgboostLibDir(python)
  if (!dir) tried.push(`${python}: no xgboost package`)
  for (const name of dir ? names.pythonLib : []) {
    const file = join(dir!, name)
    if (!existsSync(file)) {
      tried.push(`${file}: no such file`)
      continue
    }
    try {
      return open(koffi, file, 'python')
    } catch (err) {
      tried.push(`${file}: ${(err as Error).message.trim()}`)
    }
  }
  for (const name of names.system) {
    try {
      return open(koffi, name, 'system')
    } catch (err) {
      tried.push(`${name}: ${(err as Error).message.trim()}`)
    }
  }
  throw new XGBoostNotFoundError(`no XGBoost library found (tried TRAINPOOL_XGBOOST_LIB: unset; ${tried.join('; ')}); ${HOW_TO_GET_XGBOOST}`)
}
