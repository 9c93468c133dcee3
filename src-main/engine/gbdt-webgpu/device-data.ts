// The binned training matrix on the device, uploaded once per worker and shared by every model and
// every training call on it: bins (feature-major, 4 u8 or 2 u16 per word, rows padded), float32
// labels, and per feature (number of value bins, has-missing). A worker's test rows, binned with the
// training cuts, follow the training rows in the bin matrix: rows never sampled that follow every
// tree (the row update adds their leaf values), so their margins are read back once per chunk.
import { type GbdtData, prepareGbdtData } from '../gbdt'
import { USAGE, type WgslDevice } from '../webgpu/device'

export interface GpuGbdtData {
  host: GbdtData
  /** test rows after the host's training rows (0: none); the device's rows are host.rows + testRows */
  testRows: number
  /**
   * per feature, the test rows' smallest and largest non-missing value (±Infinity without one): a
   * split at bin −1 or at the last bin sends a value beyond the training cuts where the bins cannot
   * tell (predictGbdt compares the value with the threshold), see testMarginsExact
   */
  testMin: Float32Array
  testMax: Float32Array
  /** rows padded to a whole word per feature column */
  rowsPad: number
  bin16: boolean
  bins: GPUBuffer
  y: GPUBuffer
  /** per feature: (nBins, hasMissing) */
  finfo: GPUBuffer
  /** the widest feature's slots (bins + missing) */
  maxWidth: number
  disposed: boolean
}

/** Row-major float32 test features (NaN = missing), binned with the training cuts and kept on the device beside the training rows. */
export interface TestRows {
  x: Float32Array
  rows: number
}

export function uploadGbdtData(gpu: WgslDevice, host: GbdtData, test?: TestRows): GpuGbdtData {
  const { features } = host
  const testRows = test?.rows ?? 0
  // the test rows binned as the training rows (binning.ts with the training cuts; their labels are not used)
  const tested = test && testRows > 0 ? prepareGbdtData(test.x, new Float32Array(testRows), testRows, features, host.cuts.maxBin, host.cuts) : null
  const rows = host.rows + testRows
  const bin16 = host.bins instanceof Uint16Array || tested?.bins instanceof Uint16Array
  const perWord = bin16 ? 2 : 4
  const rowsPad = Math.ceil(rows / perWord) * perWord
  const binBytes = features * rowsPad * (bin16 ? 2 : 1)
  if (binBytes > gpu.limits.maxStorageBufferBindingSize) {
    throw new RangeError(
      `webgpu: the binned matrix (${rows} rows × ${features} features, ${binBytes} bytes) does not fit one storage buffer here (${gpu.limits.maxStorageBufferBindingSize} bytes)`,
    )
  }
  let packed: Uint8Array
  if (rowsPad === rows && !tested) {
    packed = new Uint8Array(host.bins.buffer, host.bins.byteOffset, host.bins.byteLength)
  } else {
    const wide = bin16 ? new Uint16Array(features * rowsPad) : new Uint8Array(features * rowsPad)
    for (let f = 0; f < features; f++) {
      wide.set(host.bins.subarray(f * host.rows, (f + 1) * host.rows), f * rowsPad)
      if (tested) wide.set(tested.bins.subarray(f * testRows, (f + 1) * testRows), f * rowsPad + host.rows)
    }
    packed = new Uint8Array(wide.buffer)
  }
  const bins = gpu.createBuffer(packed.byteLength, USAGE.STORAGE | USAGE.COPY_DST, 'gbdt-bins')
  writePadded(gpu, bins, packed)
  const y = gpu.createBuffer(host.rows * 4, USAGE.STORAGE | USAGE.COPY_DST, 'gbdt-y')
  gpu.device.queue.writeBuffer(y, 0, host.y)
  const fi = new Uint32Array(features * 2)
  let maxWidth = 1
  for (let f = 0; f < features; f++) {
    fi[2 * f] = host.nBins[f]
    fi[2 * f + 1] = host.hasMissing[f]
    maxWidth = Math.max(maxWidth, host.width[f])
  }
  const finfo = gpu.createBuffer(fi.byteLength, USAGE.STORAGE | USAGE.COPY_DST, 'gbdt-finfo')
  gpu.device.queue.writeBuffer(finfo, 0, fi)
  const testMin = new Float32Array(features).fill(Infinity)
  const testMax = new Float32Array(features).fill(-Infinity)
  for (let r = 0; r < testRows; r++) {
    for (let f = 0; f < features; f++) {
      const v = test!.x[r * features + f]
      if (v < testMin[f]) testMin[f] = v
      if (v > testMax[f]) testMax[f] = v
    }
  }
  return { host, testRows, testMin, testMax, rowsPad, bin16, bins, y, finfo, maxWidth, disposed: false }
}

/** writeBuffer needs a multiple of 4 bytes */
function writePadded(gpu: WgslDevice, buffer: GPUBuffer, bytes: Uint8Array): void {
  const whole = bytes.byteLength & ~3
  if (whole > 0) gpu.device.queue.writeBuffer(buffer, 0, bytes.buffer, bytes.byteOffset, whole)
  if (whole < bytes.byteLength) {
    const tail = new Uint8Array(4)
    tail.set(bytes.subarray(whole))
    gpu.device.queue.writeBuffer(buffer, whole, tail)
  }
}

export function disposeGbdtData(gpu: WgslDevice, d: GpuGbdtData): void {
  if (d.disposed) return
  d.disposed = true
  gpu.destroyBuffer(d.bins)
  gpu.destroyBuffer(d.y)
  gpu.destroyBuffer(d.finfo)
}
