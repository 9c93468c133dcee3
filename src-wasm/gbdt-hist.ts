// AssemblyScript: the CPU trees trainer's histogram kernel and row partition, bit for bit the
// TypeScript loops they mirror (histograms.ts, rules.ts's forwardCandidate; kernel.test.ts compares them), the pair
// (Σq, count) — or, for a classifier, (Σq, Σqh) from each row's quantised hessian — added as one f64x2. Built by scripts/build-wasm.mjs into
// src-main/engine/gbdt/hist-wasm.generated.ts (npm run build:wasm). Arguments are byte addresses in
// the trainer's one memory; why and what: src-main/engine/gbdt/README.md, "The histogram kernel".

// hist slot at h + 16·bin += (g, 1)
function add(h: usize, bin: usize, g: v128): void {
  const p = h + (bin << 4)
  v128.store(p, f64x2.add(v128.load(p), g))
}

function pair(q: usize, k: usize): v128 {
  return f64x2.replace_lane(f64x2.splat(1.0), 0, <f64>load<i32>(q + (k << 2)))
}

function row(rows: usize, k: usize): usize {
  return <usize>load<i32>(rows + (k << 2))
}

export function build1u8(b0: usize, rows: usize, q: usize, begin: i32, end: i32, h0: usize): void {
  let k = <usize>begin
  const e = <usize>end
  // two rows per iteration: their read-modify-writes overlap
  for (; k + 1 < e; k += 2) {
    const i0 = <usize>load<u8>(b0 + row(rows, k))
    const i1 = <usize>load<u8>(b0 + row(rows, k + 1))
    add(h0, i0, pair(q, k))
    add(h0, i1, pair(q, k + 1))
  }
  if (k < e) add(h0, <usize>load<u8>(b0 + row(rows, k)), pair(q, k))
}

export function build2u8(b0: usize, b1: usize, rows: usize, q: usize, begin: i32, end: i32, h0: usize, h1: usize): void {
  for (let k = <usize>begin, e = <usize>end; k < e; k++) {
    const r = row(rows, k)
    const g = pair(q, k)
    add(h0, <usize>load<u8>(b0 + r), g)
    add(h1, <usize>load<u8>(b1 + r), g)
  }
}

export function build4u8(
  b0: usize,
  b1: usize,
  b2: usize,
  b3: usize,
  rows: usize,
  q: usize,
  begin: i32,
  end: i32,
  h0: usize,
  h1: usize,
  h2: usize,
  h3: usize,
): void {
  for (let k = <usize>begin, e = <usize>end; k < e; k++) {
    const r = row(rows, k)
    const g = pair(q, k)
    add(h0, <usize>load<u8>(b0 + r), g)
    add(h1, <usize>load<u8>(b1 + r), g)
    add(h2, <usize>load<u8>(b2 + r), g)
    add(h3, <usize>load<u8>(b3 + r), g)
  }
}

export function build1u16(b0: usize, rows: usize, q: usize, begin: i32, end: i32, h0: usize): void {
  let k = <usize>begin
  const e = <usize>end
  for (; k + 1 < e; k += 2) {
    const i0 = <usize>load<u16>(b0 + (row(rows, k) << 1))
    const i1 = <usize>load<u16>(b0 + (row(rows, k + 1) << 1))
    add(h0, i0, pair(q, k))
    add(h0, i1, pair(q, k + 1))
  }
  if (k < e) add(h0, <usize>load<u16>(b0 + (row(rows, k) << 1)), pair(q, k))
}

export function build2u16(b0: usize, b1: usize, rows: usize, q: usize, begin: i32, end: i32, h0: usize, h1: usize): void {
  for (let k = <usize>begin, e = <usize>end; k < e; k++) {
    const r = row(rows, k) << 1
    const g = pair(q, k)
    add(h0, <usize>load<u16>(b0 + r), g)
    add(h1, <usize>load<u16>(b1 + r), g)
  }
}

export function build4u16(
  b0: usize,
  b1: usize,
  b2: usize,
  b3: usize,
  rows: usize,
  q: usize,
  begin: i32,
  end: i32,
  h0: usize,
  h1: usize,
  h2: usize,
  h3: usize,
): void {
  for (let k = <usize>begin, e = <usize>end; k < e; k++) {
    const r = row(rows, k) << 1
    const g = pair(q, k)
    add(h0, <usize>load<u16>(b0 + r), g)
    add(h1, <usize>load<u16>(b1 + r), g)
    add(h2, <usize>load<u16>(b2 + r), g)
    add(h3, <usize>load<u16>(b3 + r), g)
  }
}

// ---- a classifier's: each row's own quantised hessian (qh) in place of 1; the bins' width T is u8 or u16

function pairH(q: usize, qh: usize, k: usize): v128 {
  return f64x2.replace_lane(f64x2.splat(<f64>load<i32>(qh + (k << 2))), 0, <f64>load<i32>(q + (k << 2)))
}

function binOf<T>(b: usize, r: usize): usize {
  return <usize>load<T>(b + (r << alignof<T>()))
}

function build1H<T>(b0: usize, rows: usize, q: usize, qh: usize, begin: i32, end: i32, h0: usize): void {
  let k = <usize>begin
  const e = <usize>end
  for (; k + 1 < e; k += 2) {
    const i0 = binOf<T>(b0, row(rows, k))
    const i1 = binOf<T>(b0, row(rows, k + 1))
    add(h0, i0, pairH(q, qh, k))
    add(h0, i1, pairH(q, qh, k + 1))
  }
  if (k < e) add(h0, binOf<T>(b0, row(rows, k)), pairH(q, qh, k))
}

function build2H<T>(b0: usize, b1: usize, rows: usize, q: usize, qh: usize, begin: i32, end: i32, h0: usize, h1: usize): void {
  for (let k = <usize>begin, e = <usize>end; k < e; k++) {
    const r = row(rows, k)
    const g = pairH(q, qh, k)
    add(h0, binOf<T>(b0, r), g)
    add(h1, binOf<T>(b1, r), g)
  }
}

function build4H<T>(
  b0: usize,
  b1: usize,
  b2: usize,
  b3: usize,
  rows: usize,
  q: usize,
  qh: usize,
  begin: i32,
  end: i32,
  h0: usize,
  h1: usize,
  h2: usize,
  h3: usize,
): void {
  for (let k = <usize>begin, e = <usize>end; k < e; k++) {
    const r = row(rows, k)
    const g = pairH(q, qh, k)
    add(h0, binOf<T>(b0, r), g)
    add(h1, binOf<T>(b1, r), g)
    add(h2, binOf<T>(b2, r), g)
    add(h3, binOf<T>(b3, r), g)
  }
}

// a classifier's root of every training row in order (rows 0 … n − 1): no row index to read
export function buildDense4Hu8(b0: usize, b1: usize, b2: usize, b3: usize, q: usize, qh: usize, n: i32, h0: usize, h1: usize, h2: usize, h3: usize): void {
  for (let k: usize = 0, e = <usize>n; k < e; k++) {
    const g = pairH(q, qh, k)
    add(h0, <usize>load<u8>(b0 + k), g)
    add(h1, <usize>load<u8>(b1 + k), g)
    add(h2, <usize>load<u8>(b2 + k), g)
    add(h3, <usize>load<u8>(b3 + k), g)
  }
}

export function buildDense1Hu8(b0: usize, q: usize, qh: usize, n: i32, h0: usize): void {
  for (let k: usize = 0, e = <usize>n; k < e; k++) add(h0, <usize>load<u8>(b0 + k), pairH(q, qh, k))
}

export function build1Hu8(b0: usize, rows: usize, q: usize, qh: usize, begin: i32, end: i32, h0: usize): void {
  build1H<u8>(b0, rows, q, qh, begin, end, h0)
}

export function build1Hu16(b0: usize, rows: usize, q: usize, qh: usize, begin: i32, end: i32, h0: usize): void {
  build1H<u16>(b0, rows, q, qh, begin, end, h0)
}

export function build2Hu8(b0: usize, b1: usize, rows: usize, q: usize, qh: usize, begin: i32, end: i32, h0: usize, h1: usize): void {
  build2H<u8>(b0, b1, rows, q, qh, begin, end, h0, h1)
}

export function build2Hu16(b0: usize, b1: usize, rows: usize, q: usize, qh: usize, begin: i32, end: i32, h0: usize, h1: usize): void {
  build2H<u16>(b0, b1, rows, q, qh, begin, end, h0, h1)
}

export function build4Hu8(
  b0: usize,
  b1: usize,
  b2: usize,
  b3: usize,
  rows: usize,
  q: usize,
  qh: usize,
  begin: i32,
  end: i32,
  h0: usize,
  h1: usize,
  h2: usize,
  h3: usize,
): void {
  build4H<u8>(b0, b1, b2, b3, rows, q, qh, begin, end, h0, h1, h2, h3)
}

export function build4Hu16(
  b0: usize,
  b1: usize,
  b2: usize,
  b3: usize,
  rows: usize,
  q: usize,
  qh: usize,
  begin: i32,
  end: i32,
  h0: usize,
  h1: usize,
  h2: usize,
  h3: usize,
): void {
  build4H<u16>(b0, b1, b2, b3, rows, q, qh, begin, end, h0, h1, h2, h3)
}

// ---- a regressor's node in 8-byte slots: a 16-byte f64x2 read-modify-write costs ~0.9 ns an update
// here, an 8-byte one ~0.47. These loops add into a zeroed scratch of nb 8-byte slots a feature
// (half a region's bytes: the region itself need not be zeroed), then `unpackPairs` / `withCounts`
// write the region's (Σq, count) pairs from it. Every value is the same integer the f64x2 loops sum,
// so no bit changes.
//
// packed: a row adds q·2^16 + 1 to an i64: Σq·2^16 + count, exact while a node has < 2^16 rows
// (|Σq| < 2^16·2^30, count < 2^16); a larger node is built in chunks of fewer, each chunk's sums
// added to the pairs (`unpackAddPairs`). dense sums: a node of every training row in order (the root of
// a model that samples every row) adds q alone (float64, exact below 2^53) and takes its counts from
// `countBins`'s table; its rows need no index either.

/** row k's slot value: packed (i64) or its q alone (f64) */
function slotValue<T>(q: usize, k: usize): T {
  if (isInteger<T>()) return <T>packed(q, k)
  return <T>(<f64>load<i32>(q + (k << 2)))
}

/** slot at s + 8·bin += v */
function addSlot<T>(s: usize, bin: usize, v: T): void {
  const p = s + (bin << 3)
  store<T>(p, load<T>(p) + v)
}

function packed(q: usize, k: usize): i64 {
  return ((<i64>load<i32>(q + (k << 2))) << 16) + 1
}

export function packed1u8(b0: usize, rows: usize, q: usize, begin: i32, end: i32, s0: usize): void {
  let k = <usize>begin
  const e = <usize>end
  for (; k + 1 < e; k += 2) {
    const i0 = <usize>load<u8>(b0 + row(rows, k))
    const i1 = <usize>load<u8>(b0 + row(rows, k + 1))
    addSlot<i64>(s0, i0, packed(q, k))
    addSlot<i64>(s0, i1, packed(q, k + 1))
  }
  if (k < e) addSlot<i64>(s0, <usize>load<u8>(b0 + row(rows, k)), packed(q, k))
}

export function packed2u8(b0: usize, b1: usize, rows: usize, q: usize, begin: i32, end: i32, s0: usize, s1: usize): void {
  for (let k = <usize>begin, e = <usize>end; k < e; k++) {
    const r = row(rows, k)
    const v = packed(q, k)
    addSlot<i64>(s0, <usize>load<u8>(b0 + r), v)
    addSlot<i64>(s1, <usize>load<u8>(b1 + r), v)
  }
}

export function packed4u8(
  b0: usize,
  b1: usize,
  b2: usize,
  b3: usize,
  rows: usize,
  q: usize,
  begin: i32,
  end: i32,
  s0: usize,
  s1: usize,
  s2: usize,
  s3: usize,
): void {
  for (let k = <usize>begin, e = <usize>end; k < e; k++) {
    const r = row(rows, k)
    const v = packed(q, k)
    addSlot<i64>(s0, <usize>load<u8>(b0 + r), v)
    addSlot<i64>(s1, <usize>load<u8>(b1 + r), v)
    addSlot<i64>(s2, <usize>load<u8>(b2 + r), v)
    addSlot<i64>(s3, <usize>load<u8>(b3 + r), v)
  }
}

/** packed, rows 0 … n − 1 in order (no index) */
export function packedDense4u8(b0: usize, b1: usize, b2: usize, b3: usize, q: usize, n: i32, s0: usize, s1: usize, s2: usize, s3: usize): void {
  dense4<i64>(b0, b1, b2, b3, q, n, s0, s1, s2, s3)
}

export function packedDense1u8(b0: usize, q: usize, n: i32, s0: usize): void {
  for (let k: usize = 0, e = <usize>n; k < e; k++) addSlot<i64>(s0, <usize>load<u8>(b0 + k), packed(q, k))
}

/** Σq alone, rows 0 … n − 1 in order */
export function sumDense4u8(b0: usize, b1: usize, b2: usize, b3: usize, q: usize, n: i32, s0: usize, s1: usize, s2: usize, s3: usize): void {
  dense4<f64>(b0, b1, b2, b3, q, n, s0, s1, s2, s3)
}

/**
 * Rows 0 … n − 1 in order into four columns' 8-byte slots, each row's slot value T (i64: packed, f64:
 * Σq alone): sixteen rows' bins of a column come in one 16-byte load (the rows are consecutive), so a
 * row's four updates cost no byte loads of their own.
 */
function dense4<T>(b0: usize, b1: usize, b2: usize, b3: usize, q: usize, n: i32, s0: usize, s1: usize, s2: usize, s3: usize): void {
  const e = <usize>n
  let k: usize = 0
  for (; k + 16 <= e; k += 16) {
    const x0 = v128.load(b0 + k)
    const x1 = v128.load(b1 + k)
    const x2 = v128.load(b2 + k)
    const x3 = v128.load(b3 + k)
    const qk = q + (k << 2)
    let v: T
    v = slotValue<T>(qk, 0)
    addSlot<T>(s0, <usize>i8x16.extract_lane_u(x0, 0), v)
    addSlot<T>(s1, <usize>i8x16.extract_lane_u(x1, 0), v)
    addSlot<T>(s2, <usize>i8x16.extract_lane_u(x2, 0), v)
    addSlot<T>(s3, <usize>i8x16.extract_lane_u(x3, 0), v)
    v = slotValue<T>(qk, 1)
    addSlot<T>(s0, <usize>i8x16.extract_lane_u(x0, 1), v)
    addSlot<T>(s1, <usize>i8x16.extract_lane_u(x1, 1), v)
    addSlot<T>(s2, <usize>i8x16.extract_lane_u(x2, 1), v)
    addSlot<T>(s3, <usize>i8x16.extract_lane_u(x3, 1), v)
    v = slotValue<T>(qk, 2)
    addSlot<T>(s0, <usize>i8x16.extract_lane_u(x0, 2), v)
    addSlot<T>(s1, <usize>i8x16.extract_lane_u(x1, 2), v)
    addSlot<T>(s2, <usize>i8x16.extract_lane_u(x2, 2), v)
    addSlot<T>(s3, <usize>i8x16.extract_lane_u(x3, 2), v)
    v = slotValue<T>(qk, 3)
    addSlot<T>(s0, <usize>i8x16.extract_lane_u(x0, 3), v)
    addSlot<T>(s1, <usize>i8x16.extract_lane_u(x1, 3), v)
    addSlot<T>(s2, <usize>i8x16.extract_lane_u(x2, 3), v)
    addSlot<T>(s3, <usize>i8x16.extract_lane_u(x3, 3), v)
    v = slotValue<T>(qk, 4)
    addSlot<T>(s0, <usize>i8x16.extract_lane_u(x0, 4), v)
    addSlot<T>(s1, <usize>i8x16.extract_lane_u(x1, 4), v)
    addSlot<T>(s2, <usize>i8x16.extract_lane_u(x2, 4), v)
    addSlot<T>(s3, <usize>i8x16.extract_lane_u(x3, 4), v)
    v = slotValue<T>(qk, 5)
    addSlot<T>(s0, <usize>i8x16.extract_lane_u(x0, 5), v)
    addSlot<T>(s1, <usize>i8x16.extract_lane_u(x1, 5), v)
    addSlot<T>(s2, <usize>i8x16.extract_lane_u(x2, 5), v)
    addSlot<T>(s3, <usize>i8x16.extract_lane_u(x3, 5), v)
    v = slotValue<T>(qk, 6)
    addSlot<T>(s0, <usize>i8x16.extract_lane_u(x0, 6), v)
    addSlot<T>(s1, <usize>i8x16.extract_lane_u(x1, 6), v)
    addSlot<T>(s2, <usize>i8x16.extract_lane_u(x2, 6), v)
    addSlot<T>(s3, <usize>i8x16.extract_lane_u(x3, 6), v)
    v = slotValue<T>(qk, 7)
    addSlot<T>(s0, <usize>i8x16.extract_lane_u(x0, 7), v)
    addSlot<T>(s1, <usize>i8x16.extract_lane_u(x1, 7), v)
    addSlot<T>(s2, <usize>i8x16.extract_lane_u(x2, 7), v)
    addSlot<T>(s3, <usize>i8x16.extract_lane_u(x3, 7), v)
    v = slotValue<T>(qk, 8)
    addSlot<T>(s0, <usize>i8x16.extract_lane_u(x0, 8), v)
    addSlot<T>(s1, <usize>i8x16.extract_lane_u(x1, 8), v)
    addSlot<T>(s2, <usize>i8x16.extract_lane_u(x2, 8), v)
    addSlot<T>(s3, <usize>i8x16.extract_lane_u(x3, 8), v)
    v = slotValue<T>(qk, 9)
    addSlot<T>(s0, <usize>i8x16.extract_lane_u(x0, 9), v)
    addSlot<T>(s1, <usize>i8x16.extract_lane_u(x1, 9), v)
    addSlot<T>(s2, <usize>i8x16.extract_lane_u(x2, 9), v)
    addSlot<T>(s3, <usize>i8x16.extract_lane_u(x3, 9), v)
    v = slotValue<T>(qk, 10)
    addSlot<T>(s0, <usize>i8x16.extract_lane_u(x0, 10), v)
    addSlot<T>(s1, <usize>i8x16.extract_lane_u(x1, 10), v)
    addSlot<T>(s2, <usize>i8x16.extract_lane_u(x2, 10), v)
    addSlot<T>(s3, <usize>i8x16.extract_lane_u(x3, 10), v)
    v = slotValue<T>(qk, 11)
    addSlot<T>(s0, <usize>i8x16.extract_lane_u(x0, 11), v)
    addSlot<T>(s1, <usize>i8x16.extract_lane_u(x1, 11), v)
    addSlot<T>(s2, <usize>i8x16.extract_lane_u(x2, 11), v)
    addSlot<T>(s3, <usize>i8x16.extract_lane_u(x3, 11), v)
    v = slotValue<T>(qk, 12)
    addSlot<T>(s0, <usize>i8x16.extract_lane_u(x0, 12), v)
    addSlot<T>(s1, <usize>i8x16.extract_lane_u(x1, 12), v)
    addSlot<T>(s2, <usize>i8x16.extract_lane_u(x2, 12), v)
    addSlot<T>(s3, <usize>i8x16.extract_lane_u(x3, 12), v)
    v = slotValue<T>(qk, 13)
    addSlot<T>(s0, <usize>i8x16.extract_lane_u(x0, 13), v)
    addSlot<T>(s1, <usize>i8x16.extract_lane_u(x1, 13), v)
    addSlot<T>(s2, <usize>i8x16.extract_lane_u(x2, 13), v)
    addSlot<T>(s3, <usize>i8x16.extract_lane_u(x3, 13), v)
    v = slotValue<T>(qk, 14)
    addSlot<T>(s0, <usize>i8x16.extract_lane_u(x0, 14), v)
    addSlot<T>(s1, <usize>i8x16.extract_lane_u(x1, 14), v)
    addSlot<T>(s2, <usize>i8x16.extract_lane_u(x2, 14), v)
    addSlot<T>(s3, <usize>i8x16.extract_lane_u(x3, 14), v)
    v = slotValue<T>(qk, 15)
    addSlot<T>(s0, <usize>i8x16.extract_lane_u(x0, 15), v)
    addSlot<T>(s1, <usize>i8x16.extract_lane_u(x1, 15), v)
    addSlot<T>(s2, <usize>i8x16.extract_lane_u(x2, 15), v)
    addSlot<T>(s3, <usize>i8x16.extract_lane_u(x3, 15), v)
  }
  for (; k < e; k++) {
    const v = slotValue<T>(q, k)
    addSlot<T>(s0, <usize>load<u8>(b0 + k), v)
    addSlot<T>(s1, <usize>load<u8>(b1 + k), v)
    addSlot<T>(s2, <usize>load<u8>(b2 + k), v)
    addSlot<T>(s3, <usize>load<u8>(b3 + k), v)
  }
}

export function sumDense1u8(b0: usize, q: usize, n: i32, s0: usize): void {
  for (let k: usize = 0, e = <usize>n; k < e; k++) addSlot<f64>(s0, <usize>load<u8>(b0 + k), <f64>load<i32>(q + (k << 2)))
}

/** out[bin] += 1 for rows 0 … n − 1 of a column (out: float64, zeroed): the dense sums' counts */
export function countBins(b0: usize, n: i32, out: usize): void {
  for (let k: usize = 0, e = <usize>n; k < e; k++) addSlot<f64>(out, <usize>load<u8>(b0 + k), 1.0)
}

/** the region h of nb bins: the packed sums at s (nb i64) written as its (Σq, count) pairs */
export function unpackPairs(h: usize, s: usize, nb: i32): void {
  for (let b: usize = 0, e = <usize>nb; b < e; b++) {
    const v = load<i64>(s + (b << 3))
    const count = v & 0xffff
    store<f64>(h + (b << 4), <f64>((v - count) >> 16))
    store<f64>(h + (b << 4) + 8, <f64>count)
  }
}

/** the region h of nb bins: the packed sums at s (nb i64) added to its (Σq, count) pairs (a node built in chunks) */
export function unpackAddPairs(h: usize, s: usize, nb: i32): void {
  for (let b: usize = 0, e = <usize>nb; b < e; b++) {
    const v = load<i64>(s + (b << 3))
    const count = v & 0xffff
    const p = h + (b << 4)
    v128.store(p, f64x2.add(v128.load(p), f64x2.replace_lane(f64x2.splat(<f64>count), 0, <f64>((v - count) >> 16))))
  }
}

/** the region h of nb bins: the Σq at s (nb f64) with the counts table's counts, as (Σq, count) pairs */
export function withCounts(h: usize, s: usize, nb: i32, counts: usize): void {
  for (let b: usize = 0, e = <usize>nb; b < e; b++) {
    const g = load<f64>(s + (b << 3))
    store<f64>(h + (b << 4), g)
    store<f64>(h + (b << 4) + 8, load<f64>(counts + (b << 3)))
  }
}

// ---- per bin: h, t, s, out, p are byte addresses of a histogram region; len its doubles (a
// region is (Σq, count) pairs, so even; an odd last one is done alone all the same)

export function zero(h: usize, len: i32): void {
  memory.fill(h, 0, (<usize>len) << 3)
}

/** t[i] −= s[i] */
export function subtract(t: usize, s: usize, len: i32): void {
  difference(t, t, s, len)
}

/** out[i] = p[i] − s[i] (out may be p) */
export function difference(out: usize, p: usize, s: usize, len: i32): void {
  const e = (<usize>len) << 3
  let i: usize = 0
  for (; i + 16 <= e; i += 16) v128.store(out + i, f64x2.sub(v128.load(p + i), v128.load(s + i)))
  if (i < e) store<f64>(out + i, load<f64>(p + i) - load<f64>(s + i))
}

/**
 * rules.ts's forwardCandidates.next: from bin b on (state = the left side's (Σq, rows) before b),
 * the first bin whose forward candidate passes the estimate Σq_L²/(rows_L + λ) + Σq_R²/(rows_R + λ)
 * ≥ thrQ, its left side then stored in state; −1 when the scan ends (right side below
 * min_child_weight or empty, or no bins left). Four bins per step, each lane the reference's float64
 * operations on its bin; a step that ends the scan or finds a candidate is resolved bin by bin, in order.
 */
export function forwardCandidate(h: usize, b: i32, nb: i32, gq: f64, n: f64, mcw: f64, thrQ: f64, lambda: f64, state: usize): i32 {
  let acc = v128.load(state)
  const vn = f64x2.splat(n)
  const vmcw = f64x2.splat(mcw)
  const vgq = f64x2.splat(gq)
  const vthr = f64x2.splat(thrQ)
  const vlambda = f64x2.splat(lambda)
  // hr < mcw or hr ≤ 0 in one test, hr < max(mcw, 1): hr is an integer (a sum of counts or of quantised hessians)
  const vend = f64x2.splat(max(mcw, 1))
  // four bins a step (one test for all four; 1.76 → 1.49 ns a bin, microbenchmark): the running sums
  // are integers below 2^53, so any grouping of the additions gives the same prefix sums
  for (; b + 3 < nb; b += 4) {
    const p = h + ((<usize>b) << 4)
    const p0 = v128.load(p)
    const s01 = f64x2.add(p0, v128.load(p, 16))
    const p2 = v128.load(p, 32)
    const a0 = f64x2.add(acc, p0)
    const a1 = f64x2.add(acc, s01)
    const a2 = f64x2.add(a1, p2)
    const a3 = f64x2.add(acc, f64x2.add(s01, f64x2.add(p2, v128.load(p, 48))))
    const ends01 = f64x2.lt(f64x2.sub(vn, v128.shuffle<f64>(a0, a1, 1, 3)), vend)
    const ends23 = f64x2.lt(f64x2.sub(vn, v128.shuffle<f64>(a2, a3, 1, 3)), vend)
    const passes01 = passes(a0, a1, vn, vgq, vmcw, vthr, vlambda)
    const passes23 = passes(a2, a3, vn, vgq, vmcw, vthr, vlambda)
    if (v128.any_true(v128.or(v128.or(ends01, passes01), v128.or(ends23, passes23)))) {
      // the first of the four, in bin order, that ends the scan or is a candidate
      const e = i64x2.bitmask(ends01) | (i64x2.bitmask(ends23) << 2)
      const c = i64x2.bitmask(passes01) | (i64x2.bitmask(passes23) << 2)
      for (let k = 0; k < 4; k++) {
        if (e & (1 << k)) return -1
        if (c & (1 << k)) {
          v128.store(state, k == 0 ? a0 : k == 1 ? a1 : k == 2 ? a2 : a3)
          return b + k
        }
      }
    }
    acc = a3
  }
  for (; b < nb; b++) {
    acc = f64x2.add(acc, v128.load(h + ((<usize>b) << 4)))
    const hl = f64x2.extract_lane(acc, 1)
    const hr = n - hl
    if (hr < mcw || hr <= 0) return -1
    if (hl < mcw) continue
    const glq = f64x2.extract_lane(acc, 0)
    const grq = gq - glq
    if ((glq * glq) / (hl + lambda) + (grq * grq) / (hr + lambda) < thrQ) continue
    v128.store(state, acc)
    return b
  }
  return -1
}

/** Two bins' candidates (prefix sums a and b): left side ≥ min_child_weight and not (estimate < thrQ), the reference's float64 operations per lane. */
function passes(a: v128, b: v128, vn: v128, vgq: v128, vmcw: v128, vthr: v128, vlambda: v128): v128 {
  const glq = v128.shuffle<f64>(a, b, 0, 2)
  const hl = v128.shuffle<f64>(a, b, 1, 3)
  const grq = f64x2.sub(vgq, glq)
  const est = f64x2.add(f64x2.div(f64x2.mul(glq, glq), f64x2.add(hl, vlambda)), f64x2.div(f64x2.mul(grq, grq), f64x2.add(f64x2.sub(vn, hl), vlambda)))
  return v128.andnot(f64x2.ge(hl, vmcw), f64x2.lt(est, vthr))
}

// ---- a tree's rows: histograms.ts's row loops (squaredErrorRows, quantiseRows, addToRows), the same
// values bit for bit: each f32 operation there is one here, and the quantisation's product is f64 in both

/**
 * Squared error's gradients of the sampled rows: for each row r in order with sampled[r] = 1, g[ns] =
 * f32(pred[r] − y[r]) and rows[ns] = r (ns counting them); returns the largest |g|. `every`: every
 * row is sampled (sampled unread), four rows a step.
 */
export function squaredErrorRows(pred: usize, y: usize, sampled: usize, n: i32, every: i32, g: usize, rows: usize): f64 {
  const e = <usize>n
  let k: usize = 0
  if (every) {
    let vmax = f32x4.splat(0)
    let r4 = i32x4(0, 1, 2, 3)
    const four = i32x4.splat(4)
    for (; k + 4 <= e; k += 4) {
      const d = f32x4.sub(v128.load(pred + (k << 2)), v128.load(y + (k << 2)))
      v128.store(g + (k << 2), d)
      v128.store(rows + (k << 2), r4)
      r4 = i32x4.add(r4, four)
      // pmax: a NaN |g| is passed over, as the TypeScript loop's comparison does
      vmax = f32x4.pmax(vmax, f32x4.abs(d))
    }
    let m = above(f32x4.extract_lane(vmax, 0), 0)
    m = above(f32x4.extract_lane(vmax, 1), m)
    m = above(f32x4.extract_lane(vmax, 2), m)
    m = above(f32x4.extract_lane(vmax, 3), m)
    for (; k < e; k++) {
      const d = load<f32>(pred + (k << 2)) - load<f32>(y + (k << 2))
      store<f32>(g + (k << 2), d)
      store<i32>(rows + (k << 2), <i32>k)
      m = above(abs(d), m)
    }
    return <f64>m
  }
  // branch-free, as the TypeScript loop: every row is written at ns, and only a drawn one advances it
  let ns: usize = 0
  let m: f32 = 0
  for (; k < e; k++) {
    const s = <usize>load<u8>(sampled + k)
    const d = load<f32>(pred + (k << 2)) - load<f32>(y + (k << 2))
    store<f32>(g + (ns << 2), d)
    store<i32>(rows + (ns << 2), <i32>k)
    ns += s
    m = above(s ? abs(d) : <f32>0, m)
  }
  return <f64>m
}

/** a if a > m, else m (a NaN a never is) */
function above(a: f32, m: f32): f32 {
  return a > m ? a : m
}

/** q[i] = trunc(g[i] · scale) for i < count (scale a power of two: the product is exact); returns Σq */
export function quantiseRows(g: usize, q: usize, count: i32, scale: f64): f64 {
  let sum: f64 = 0
  for (let i: usize = 0, e = <usize>count; i < e; i++) {
    const v = <i32>(<f64>load<f32>(g + (i << 2)) * scale)
    store<i32>(q + (i << 2), v)
    sum += <f64>v
  }
  return sum
}

/** pred[rows[k]] += v (f32) for k in [begin, end): a leaf's value added to its rows' margins */
export function addToRows(pred: usize, rows: usize, begin: i32, end: i32, v: f32): void {
  for (let k = <usize>begin, e = <usize>end; k < e; k++) {
    const p = pred + (row(rows, k) << 2)
    store<f32>(p, load<f32>(p) + v)
  }
}

// ---- partition: a node's rows (and their q, and a classifier's qh) stably split by its split

/**
 * grow.ts's partition: rows [begin, end) of a node (row indices at `rows`, their q at `q` and, when
 * qh ≠ 0, their qh at `qh`) split stably by the column at `b` (bins of width T): a row goes left iff
 * its bin ≤ splitBin, or, when its bin is `missing` (−1: the feature has none), iff defaultLeft.
 * Left ones stay in place in order, right ones go through the scratches (sRows, sQ, sQH) and are
 * copied after them; returns the first right position. Branch-free: every row is written to both
 * sides and only its side's index advances (the side of a row is unpredictable).
 */
function partitionOf<T>(
  b: usize,
  rows: usize,
  q: usize,
  qh: usize,
  begin: i32,
  end: i32,
  splitBin: i32,
  missing: i32,
  defaultLeft: i32,
  sRows: usize,
  sQ: usize,
  sQH: usize,
): i32 {
  let wl = <usize>begin
  let nr: usize = 0
  const e = <usize>end
  // qh = 0: none (a regressor's); address 0 is the kernel's own filter state, never a qh array
  if (qh === 0) {
    for (let k = <usize>begin; k < e; k++) {
      const r = load<i32>(rows + (k << 2))
      const g = load<i32>(q + (k << 2))
      const bin = <i32>binOf<T>(b, <usize>r)
      const left = <usize>(bin === missing ? defaultLeft : <i32>(bin <= splitBin))
      store<i32>(rows + (wl << 2), r)
      store<i32>(q + (wl << 2), g)
      store<i32>(sRows + (nr << 2), r)
      store<i32>(sQ + (nr << 2), g)
      wl += left
      nr += 1 - left
    }
  } else {
    for (let k = <usize>begin; k < e; k++) {
      const r = load<i32>(rows + (k << 2))
      const g = load<i32>(q + (k << 2))
      const h = load<i32>(qh + (k << 2))
      const bin = <i32>binOf<T>(b, <usize>r)
      const left = <usize>(bin === missing ? defaultLeft : <i32>(bin <= splitBin))
      store<i32>(rows + (wl << 2), r)
      store<i32>(q + (wl << 2), g)
      store<i32>(qh + (wl << 2), h)
      store<i32>(sRows + (nr << 2), r)
      store<i32>(sQ + (nr << 2), g)
      store<i32>(sQH + (nr << 2), h)
      wl += left
      nr += 1 - left
    }
    memory.copy(qh + (wl << 2), sQH, nr << 2)
  }
  memory.copy(rows + (wl << 2), sRows, nr << 2)
  memory.copy(q + (wl << 2), sQ, nr << 2)
  return <i32>wl
}

export function partitionU8(
  b: usize,
  rows: usize,
  q: usize,
  qh: usize,
  begin: i32,
  end: i32,
  splitBin: i32,
  missing: i32,
  defaultLeft: i32,
  sRows: usize,
  sQ: usize,
  sQH: usize,
): i32 {
  return partitionOf<u8>(b, rows, q, qh, begin, end, splitBin, missing, defaultLeft, sRows, sQ, sQH)
}

export function partitionU16(
  b: usize,
  rows: usize,
  q: usize,
  qh: usize,
  begin: i32,
  end: i32,
  splitBin: i32,
  missing: i32,
  defaultLeft: i32,
  sRows: usize,
  sQ: usize,
  sQH: usize,
): i32 {
  return partitionOf<u16>(b, rows, q, qh, begin, end, splitBin, missing, defaultLeft, sRows, sQ, sQH)
}

// ---- XGBoost 1.7's quantile sketch, one feature a call: quantile.ts's WQSketch (the reference) bit for bit ----
// A summary entry is 16 bytes, [rmin, rmax, wmin, value] as f32: XGBoost's ranks are float (RType), so one f32
// operation here is one Math.fround(…) there. Layout of the workspace from `base`: sketchLayout. The loops that
// branch on the data in the reference (the prune's choice, the merge's three cases, FixError) select instead:
// their branches went either way about every other entry.

const ENTRY: usize = 16
const RADIX: usize = 2048

let sVals: usize = 0
let sKeysA: usize = 0
let sKeysB: usize = 0
let sCounts: usize = 0
let sT: usize = 0
let sP: usize = 0
let sM1: usize = 0
let sM2: usize = 0
let sF1: usize = 0
let sF2: usize = 0
let sLevelSizes: usize = 0
let sLevels: usize = 0
let sLimit: i32 = 0
let sMaxLevels: i32 = 0
let sLevelsLen: i32 = 0
/** the size of the summary a prune or combine returned */
let gSize: i32 = 0

function f(bits: i32): f32 {
  return reinterpret<f32>(bits)
}

function bits(x: f32): i32 {
  return reinterpret<i32>(x)
}

function align16(x: usize): usize {
  return (x + 15) & ~(<usize>15)
}

/** levels the sketch can reach for n values: a flush per `capacity` values, a level per doubling (+ margin) */
function maxLevels(n: i32, capacity: i32): i32 {
  return 34 - clz<i32>(n / capacity + 1)
}

/** sets the workspace's addresses for n values and `limit` (WQSketch.limitSize); returns its end */
function sketchLayout(base: usize, n: i32, limit: i32, maxBin: i32): usize {
  const un = <usize>n
  const lim = <usize>limit
  const fin = <usize>max(limit, min(n, maxBin * 8) + 1)
  sMaxLevels = maxLevels(n, 2 * limit)
  sKeysA = align16(base)
  sKeysB = align16(sKeysA + 4 * un)
  sCounts = align16(sKeysB + 4 * un)
  sT = sCounts + 3 * RADIX * 4
  sP = sT + 2 * lim * ENTRY
  sM1 = sP + lim * ENTRY
  sM2 = sM1 + 2 * lim * ENTRY
  sF1 = sM2 + 2 * lim * ENTRY
  sF2 = sF1 + fin * ENTRY
  sLevelSizes = sF2 + fin * ENTRY
  sLevels = align16(sLevelSizes + 4 * <usize>sMaxLevels)
  return sLevels + <usize>sMaxLevels * lim * ENTRY
}

/** the workspace bytes sketchFeature needs for n values */
export function sketchBytes(n: i32, limit: i32, maxBin: i32): i32 {
  return <i32>sketchLayout(0, n, limit, maxBin)
}

/** where the last sketchFeature call left its final summary */
export function sketchResult(): usize {
  return sF2
}

function slot(l: i32): usize {
  return sLevels + <usize>l * <usize>sLimit * ENTRY
}

function entryAt(s: usize, i: i32): usize {
  return s + ((<usize>i) << 4)
}

/** float32 bits → key in unsigned order, and back */
function toKey(k: u32): u32 {
  return k & 0x80000000 ? ~k : k | 0x80000000
}

function fromKey(k: u32): u32 {
  return k & 0x80000000 ? k & 0x7fffffff : ~k
}

/** keysA = keys of vals[start, start + len), sorted into keysB (LSD radix, 3 passes of 11 bits, counted in one pass) */
function sortChunk(start: i32, len: i32): void {
  const c0 = sCounts
  const c1 = c0 + RADIX * 4
  const c2 = c1 + RADIX * 4
  memory.fill(c0, 0, 3 * RADIX * 4)
  const src = sVals + ((<usize>start) << 2)
  const n = <usize>len
  for (let i: usize = 0; i < n; i++) {
    const k = toKey(load<u32>(src + (i << 2)))
    store<u32>(sKeysA + (i << 2), k)
    const p0 = c0 + ((k & 2047) << 2)
    store<i32>(p0, load<i32>(p0) + 1)
    const p1 = c1 + (((k >>> 11) & 2047) << 2)
    store<i32>(p1, load<i32>(p1) + 1)
    const p2 = c2 + ((k >>> 22) << 2)
    store<i32>(p2, load<i32>(p2) + 1)
  }
  let s0 = 0
  let s1 = 0
  let s2 = 0
  for (let b: usize = 0; b < RADIX; b++) {
    const p = b << 2
    const n0 = load<i32>(c0 + p)
    const n1 = load<i32>(c1 + p)
    const n2 = load<i32>(c2 + p)
    store<i32>(c0 + p, s0)
    store<i32>(c1 + p, s1)
    store<i32>(c2 + p, s2)
    s0 += n0
    s1 += n1
    s2 += n2
  }
  radixScatter(sKeysA, sKeysB, n, c0, 0)
  radixScatter(sKeysB, sKeysA, n, c1, 11)
  radixScatter(sKeysA, sKeysB, n, c2, 22)
}

function radixScatter(src: usize, dst: usize, n: usize, counts: usize, shift: u32): void {
  for (let i: usize = 0; i < n; i++) {
    const k = load<u32>(src + (i << 2))
    const p = counts + (((k >>> shift) & 2047) << 2)
    const at = load<i32>(p)
    store<i32>(p, at + 1)
    store<u32>(dst + ((<usize>at) << 2), k)
  }
}

/** Queue::MakeSummary over the sorted keysB[0, len): equal values merged, ranks float32 running sums; into T */
function makeSummary(len: i32): i32 {
  let o = sT
  let wsum: f32 = 0
  let i = 0
  while (i < len) {
    const k = load<u32>(sKeysB + ((<usize>i) << 2))
    let j = i + 1
    while (j < len && load<u32>(sKeysB + ((<usize>j) << 2)) == k) ++j
    const w = <f32>(j - i)
    store<f32>(o, wsum)
    store<f32>(o, wsum + w, 4)
    store<f32>(o, w, 8)
    store<u32>(o, fromKey(k), 12)
    wsum = wsum + w
    o += ENTRY
    i = j
  }
  return <i32>((o - sT) >> 4)
}

/** WQSummary::SetPrune of src[0, size) into out, or src itself when it is small enough; size in gSize */
function prune(src: usize, size: i32, maxsize: i32, out: usize): usize {
  if (size <= maxsize) {
    gSize = size
    return src
  }
  const last = size - 1
  const begin = load<f32>(src, 4)
  const range: f32 = load<f32>(entryAt(src, last)) - begin
  const n = maxsize - 1
  const nf = <f32>n
  v128.store(out, v128.load(src))
  let o = out + ENTRY
  let i = 1
  let lastidx = 0
  for (let k = 1; k < n; ++k) {
    const dx2: f32 = <f32>2 * ((<f32>k * range) / nf + begin)
    while (i < last) {
      const e = entryAt(src, i + 1)
      if (dx2 < load<f32>(e, 4) + load<f32>(e)) break
      ++i
    }
    if (i == last) break
    const e = entryAt(src, i)
    const next = dx2 < load<f32>(e) + load<f32>(e, 8) + (load<f32>(e, 4 + 16) - load<f32>(e, 8 + 16))
    const j = select<i32>(i, i + 1, next)
    // written always, kept only when it is another entry than the last kept
    v128.store(o, v128.load(entryAt(src, j)))
    o += select<usize>(ENTRY, 0, j != lastidx)
    lastidx = j
  }
  if (lastidx != last) {
    v128.store(o, v128.load(entryAt(src, last)))
    o += ENTRY
  }
  gSize = <i32>((o - out) >> 4)
  return out
}

/** WQSummary::SetCombine (with FixError) of a[0, na) and b[0, nb) into out, or the non-empty one; size in gSize */
function combine(a: usize, na: i32, b: usize, nb: i32, out: usize): usize {
  if (na == 0) {
    gSize = nb
    return b
  }
  if (nb == 0) {
    gSize = na
    return a
  }
  const ea = entryAt(a, na)
  const eb = entryAt(b, nb)
  let ia = a
  let ib = b
  let o = out
  let aprev: i32 = 0 // float bits (selected as integers: V8 selects f32 with a branch)
  let bprev: i32 = 0
  // FixError changes nothing unless an entry's ranks are below the previous entry's or its rmax below its
  // rmin + wmin (not seen in practice): that is checked as the entries are written, and FixError runs only then
  let prevRmin: f32 = 0
  let prevRmax: f32 = 0
  let broken = false
  while (ia < ea && ib < eb) {
    const ar = load<i32>(ia)
    const aR = load<i32>(ia, 4)
    const aw = load<i32>(ia, 8)
    const va = load<i32>(ia, 12)
    const br = load<i32>(ib)
    const bR = load<i32>(ib, 4)
    const bw = load<i32>(ib, 8)
    const vb = load<i32>(ib, 12)
    const lt = f(va) < f(vb)
    const gt = f(vb) < f(va)
    // a before b: (a.rmin + bprev, a.rmax + b.rmaxPrev, a.wmin); b before a: mirrored; equal values: the sums
    const rmin = bits(f(select<i32>(br, ar, gt)) + f(select<i32>(bprev, select<i32>(aprev, br, gt), lt)))
    const bRmaxPrev = bits(f(bR) - f(bw))
    const aRmaxPrev = bits(f(aR) - f(aw))
    const rmax = bits(f(select<i32>(bR, aR, gt)) + f(select<i32>(bRmaxPrev, select<i32>(aRmaxPrev, bR, gt), lt)))
    const wmin = bits(f(select<i32>(0, aw, gt)) + f(select<i32>(0, bw, lt)))
    aprev = select<i32>(aprev, bits(f(ar) + f(aw)), gt)
    bprev = select<i32>(bprev, bits(f(br) + f(bw)), lt)
    ia += select<usize>(0, ENTRY, gt)
    ib += select<usize>(0, ENTRY, lt)
    broken = broken | (f(rmin) < prevRmin) | (f(rmax) < prevRmax) | (f(rmax) < f(rmin) + f(wmin))
    prevRmin = f(rmin)
    prevRmax = f(rmax)
    store<i32>(o, rmin)
    store<i32>(o, rmax, 4)
    store<i32>(o, wmin, 8)
    store<i32>(o, select<i32>(vb, va, gt), 12)
    o += ENTRY
  }
  // the rest of one side, past the other side's last entry
  const tailPrev = select<i32>(bprev, aprev, ia < ea)
  const otherRmax = select<f32>(load<f32>(eb - ENTRY, 4), load<f32>(ea - ENTRY, 4), ia < ea)
  const tailEnd = select<usize>(ea, eb, ia < ea)
  for (let s = select<usize>(ia, ib, ia < ea); s < tailEnd; s += ENTRY, o += ENTRY) {
    const rmin = load<f32>(s) + f(tailPrev)
    const rmax = load<f32>(s, 4) + otherRmax
    broken = broken | (rmin < prevRmin) | (rmax < prevRmax) | (rmax < rmin + load<f32>(s, 8))
    prevRmin = rmin
    prevRmax = rmax
    store<f32>(o, rmin)
    store<f32>(o, rmax, 4)
    store<i64>(o, load<i64>(s, 8), 8)
  }
  if (broken) fixError(out, o)
  gSize = <i32>((o - out) >> 4)
  return out
}

/** WQSummary::FixError over the entries [from, to) */
function fixError(from: usize, to: usize): void {
  let prevRmin: f32 = 0
  let prevRmax: f32 = 0
  for (let e = from; e < to; e += ENTRY) {
    let rmin = load<f32>(e)
    if (rmin < prevRmin) rmin = prevRmin
    else prevRmin = rmin
    let rmax = load<f32>(e, 4)
    if (rmax < prevRmax) rmax = prevRmax
    const rminNext = rmin + load<f32>(e, 8)
    if (rmax < rminNext) rmax = rminNext
    prevRmax = rmax
    store<f32>(e, rmin)
    store<f32>(e, rmax, 4)
  }
}

/** WQuantileSketch::PushTemp: a flushed queue's summary (in T) carried up the levels */
function pushTemp(size: i32): void {
  let temp = sT
  let tsz = size
  for (let l = 1; ; ++l) {
    if (l >= sMaxLevels) unreachable()
    while (sLevelsLen < l + 1) {
      store<i32>(sLevelSizes + ((<usize>sLevelsLen) << 2), 0)
      sLevelsLen++
    }
    const at = sLevelSizes + ((<usize>l) << 2)
    const levelSize = load<i32>(at)
    if (levelSize == 0) {
      const p = prune(temp, tsz, sLimit, slot(l))
      if (p != slot(l)) memory.copy(slot(l), p, <usize>gSize * ENTRY)
      store<i32>(at, gSize)
      return
    }
    const level0 = prune(temp, tsz, sLimit, sP)
    const level0Size = gSize
    temp = combine(level0, level0Size, slot(l), levelSize, level0 == sM1 ? sM2 : sM1)
    tsz = gSize
    if (tsz > sLimit) {
      store<i32>(at, 0)
    } else {
      if (temp != slot(l)) memory.copy(slot(l), temp, <usize>tsz * ENTRY)
      store<i32>(at, tsz)
      return
    }
  }
}

/** WQuantileSketch::GetSummary, the last queue's summary in T; size in gSize */
function getSummary(size: i32): usize {
  if (sLevelsLen == 0) return prune(sT, size, sLimit, sP)
  let level0 = prune(sT, size, sLimit, sP)
  let level0Size = gSize
  for (let l = 1; l < sLevelsLen; ++l) {
    const levelSize = load<i32>(sLevelSizes + ((<usize>l) << 2))
    if (levelSize == 0) continue
    if (level0Size == 0) {
      level0 = slot(l)
      level0Size = levelSize
    } else {
      const out = combine(level0, level0Size, slot(l), levelSize, level0 == sM1 ? sM2 : sM1)
      level0 = prune(out, gSize, sLimit, sP)
      level0Size = gSize
    }
  }
  gSize = level0Size
  return level0
}

/**
 * One feature's final summary (computeCuts's `final`) from its n non-missing values at `values` (float32, row
 * order, −0 written as +0), `limit` = WQSketch.limitSize for n, with the workspace at `work` (sketchBytes):
 * left at sketchResult(); returns its size.
 */
export function sketchFeature(values: usize, n: i32, limit: i32, maxBin: i32, work: usize): i32 {
  sketchLayout(work, n, limit, maxBin)
  sVals = values
  sLimit = limit
  sLevelsLen = 0
  const capacity = 2 * limit
  let start = 0
  let qtail = 0
  let prev: f32 = 0
  for (let r = 0; r < n; r++) {
    const x = load<f32>(sVals + ((<usize>r) << 2))
    if (qtail == capacity && prev != x) {
      sortChunk(start, r - start)
      pushTemp(makeSummary(r - start))
      start = r
      qtail = 0
    }
    if (qtail == 0 || prev != x) qtail++
    prev = x
  }
  sortChunk(start, n - start)
  const summary = getSummary(makeSummary(n - start))
  const intermediate = min(n, maxBin * 8)
  const reduced = prune(summary, gSize, intermediate, sF1)
  const final = prune(reduced, gSize, min(intermediate, maxBin) + 1, sF2)
  if (final != sF2) memory.copy(sF2, final, <usize>gSize * ENTRY)
  return gSize
}

// ---- binning.ts's binFeature ----

/**
 * The bins of a feature's n values at `values` (float32, row order): upper_bound over its nb cuts at `cuts`,
 * clamped to the last bin, NaN → nb (the missing bin). A start from `grid` (`cells` cells of width 1/perCell
 * from c0; none when cells is 0), moved to the exact bin by the loops. u8 bins at `out`, or u16 if `wide`.
 * Returns 1 when some value is NaN.
 */
export function binValues(values: usize, n: i32, cuts: usize, nb: i32, grid: usize, cells: i32, c0: f64, perCell: f64, out: usize, wide: i32): i32 {
  let missing = 0
  const last = nb - 1
  for (let r = 0; r < n; r++) {
    const v = load<f32>(values + ((<usize>r) << 2))
    let b = 0
    if (v != v) {
      b = nb
      missing = 1
    } else {
      if (cells > 0) {
        const t = (<f64>v - c0) * perCell
        b = load<i32>(grid + ((<usize>(t < 0 ? 0 : t >= <f64>cells ? cells - 1 : <i32>t)) << 2))
      }
      while (b > 0 && load<f32>(cuts + ((<usize>(b - 1)) << 2)) > v) b--
      while (b < last && load<f32>(cuts + ((<usize>b) << 2)) <= v) b++
    }
    if (wide) store<u16>(out + ((<usize>r) << 1), <u16>b)
    else store<u8>(out + <usize>r, <u8>b)
  }
  return missing
}
