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
 * min_child_weight or empty, or no bins left). Two bins per step, each lane the reference's float64
 * operations on its bin; a step that ends the scan or finds a candidate is resolved bin by bin, in order.
 */
export function forwardCandidate(h: usize, b: i32, nb: i32, gq: f64, n: f64, mcw: f64, thrQ: f64, lambda: f64, state: usize): i32 {
  let acc = v128.load(state)
  const vn = f64x2.splat(n)
  const vmcw = f64x2.splat(mcw)
  const vgq = f64x2.splat(gq)
  const vthr = f64x2.splat(thrQ)
  const vlambda = f64x2.splat(lambda)
  const vzero = f64x2.splat(0)
  for (; b + 1 < nb; b += 2) {
    const p = h + ((<usize>b) << 4)
    const a1 = f64x2.add(acc, v128.load(p))
    const a2 = f64x2.add(a1, v128.load(p, 16))
    const glq = v128.shuffle<f64>(a1, a2, 0, 2)
    const hl = v128.shuffle<f64>(a1, a2, 1, 3)
    const hr = f64x2.sub(vn, hl)
    const grq = f64x2.sub(vgq, glq)
    const est = f64x2.add(f64x2.div(f64x2.mul(glq, glq), f64x2.add(hl, vlambda)), f64x2.div(f64x2.mul(grq, grq), f64x2.add(hr, vlambda)))
    const ends = v128.or(f64x2.lt(hr, vmcw), f64x2.le(hr, vzero))
    // a candidate: not ended, left side ≥ min_child_weight, and not (estimate < thrQ)
    const passes = v128.andnot(v128.not(v128.or(f64x2.lt(hl, vmcw), f64x2.lt(est, vthr))), ends)
    if (v128.any_true(v128.or(ends, passes))) {
      const e = i64x2.bitmask(ends)
      const c = i64x2.bitmask(passes)
      if (e & 1) return -1
      if (c & 1) {
        v128.store(state, a1)
        return b
      }
      if (e & 2) return -1
      v128.store(state, a2)
      return b + 1
    }
    acc = a2
  }
  if (b < nb) {
    acc = f64x2.add(acc, v128.load(h + ((<usize>b) << 4)))
    const hl = f64x2.extract_lane(acc, 1)
    const hr = n - hl
    if (hr < mcw || hr <= 0 || hl < mcw) return -1
    const glq = f64x2.extract_lane(acc, 0)
    const grq = gq - glq
    if ((glq * glq) / (hl + lambda) + (grq * grq) / (hr + lambda) < thrQ) return -1
    v128.store(state, acc)
    return b
  }
  return -1
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
