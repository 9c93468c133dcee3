// AssemblyScript: the CPU trainer's histogram update (src-main/engine/gbdt/histograms.ts's build1,
// build2 and build4) with the pair (Σq, count) added as ONE f64x2: one 16-byte read-modify-write per
// (row, feature) instead of two 8-byte ones. Every sum is an integer below 2^53, so the result is
// bit for bit the TypeScript loops' (their reference; kernel.test.ts compares them).
// Compiled by scripts/build-wasm.mjs into src-main/engine/gbdt/hist-wasm.generated.ts (npm run build:wasm).
//
// Arguments are byte addresses in the trainer's one memory (kernel.ts's arena): b* the first bin of
// a feature's column (bins[c]), rows and q the node's row indices and quantised gradients (int32),
// h* the first slot of a feature's histogram region (hist[o]); rows begin..end.

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

export function build4u8(b0: usize, b1: usize, b2: usize, b3: usize, rows: usize, q: usize, begin: i32, end: i32, h0: usize, h1: usize, h2: usize, h3: usize): void {
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

export function build4u16(b0: usize, b1: usize, b2: usize, b3: usize, rows: usize, q: usize, begin: i32, end: i32, h0: usize, h1: usize, h2: usize, h3: usize): void {
  for (let k = <usize>begin, e = <usize>end; k < e; k++) {
    const r = row(rows, k) << 1
    const g = pair(q, k)
    add(h0, <usize>load<u16>(b0 + r), g)
    add(h1, <usize>load<u16>(b1 + r), g)
    add(h2, <usize>load<u16>(b2 + r), g)
    add(h3, <usize>load<u16>(b3 + r), g)
  }
}
