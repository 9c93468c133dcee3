// Hand-checked cases: XGBoost 1.7's formulas on data small enough to do on paper.
import { describe, expect, it } from 'vitest'
import { GbdtCancelledError, predictGbdt, prepareGbdtData, resolveGbdtParams, trainGbdt, type GbdtModel, type GbdtParams } from './index'
import { leafWeight, sideGain } from './rules'
import { fnv1a64 } from './tree'

const f32 = Math.fround

/** columns → row-major float32 */
function table(cols: number[][]): { x: Float32Array; rows: number; features: number } {
  const rows = cols[0].length
  const features = cols.length
  const x = new Float32Array(rows * features)
  for (let r = 0; r < rows; r++) for (let f = 0; f < features; f++) x[r * features + f] = cols[f][r]
  return { x, rows, features }
}

const exact: Partial<GbdtParams> = { subsample: 1, colsampleBytree: 1, baseScore: 0.5 }

function fit(cols: number[][], y: number[], p: Partial<GbdtParams>, maxBin = 256): GbdtModel {
  const t = table(cols)
  const data = prepareGbdtData(t.x, Float32Array.from(y), t.rows, t.features, maxBin)
  return trainGbdt(data, { ...exact, maxBin, ...p }, 1)
}

const leaf = (w: number, eta: number) => f32(f32(w) * f32(eta))

/** the loss_chg XGBoost computes for a split of (G, H) into (GL, HL) + rest */
function lossChg(gl: number, hl: number, g: number, h: number, lambda = 1, alpha = 0): number {
  const s = f32(sideGain(gl, hl, lambda, alpha) + sideGain(g - gl, h - hl, lambda, alpha))
  return f32(s - sideGain(g, h, lambda, alpha))
}

// x = [0, 0, 1, 1], y = [0, 0, 10, 10], base 0.5: g = pred − y = [0.5, 0.5, −9.5, −9.5], h = 1.
// Root G = −18, H = 4. Split x < 1: left G 1, H 2; right G −19, H 2.
const X1 = [[0, 0, 1, 1]]
const Y1 = [0, 0, 10, 10]

describe('one split on a toy set', () => {
  it('splits at the cut 1 with leaves eta·w, w = −G/(H+λ)', () => {
    const m = fit(X1, Y1, { rounds: 1, maxDepth: 1, eta: 0.3 })
    const t = m.trees[0]
    expect(Array.from(t.feature)).toEqual([0, -1, -1])
    expect(t.threshold[0]).toBe(1)
    expect(t.splitBin[0]).toBe(0)
    expect(t.defaultLeft[0]).toBe(0)
    expect(t.leafValue[1]).toBe(leaf(-1 / 3, 0.3))
    expect(t.leafValue[2]).toBe(leaf(19 / 3, 0.3))
    const p = predictGbdt(m, table(X1).x, 4)
    expect(Array.from(p)).toEqual([0.5, 0.5, 0.5, 0.5].map((b, i) => f32(b + (i < 2 ? leaf(-1 / 3, 0.3) : leaf(19 / 3, 0.3)))))
  })

  it('goes left iff x < threshold (a value equal to the threshold goes right)', () => {
    const m = fit(X1, Y1, { rounds: 1, maxDepth: 1, eta: 0.3 })
    const p = predictGbdt(m, Float32Array.from([0.999, 1, 5, -3]), 4)
    expect(p[0]).toBe(p[3])
    expect(p[1]).toBe(p[2])
    expect(p[0]).not.toBe(p[1])
  })

  it('gain and weight formulas (float32 as XGBoost 1.7)', () => {
    expect(sideGain(1, 2, 1, 0)).toBe(f32(1 / 3))
    expect(sideGain(-19, 2, 1, 0)).toBe(f32(361 / 3))
    expect(sideGain(-18, 4, 1, 0)).toBe(f32(324 / 5))
    expect(sideGain(-19, 2, 1, 2)).toBe(f32(289 / 3)) // T(−19, α=2) = −17
    expect(sideGain(1, 2, 1, 2)).toBe(0) // |G| ≤ α
    expect(sideGain(5, 0, 1, 0)).toBe(0) // H = 0
    expect(leafWeight(-19, 2, 1, 0, 1)).toBe(f32(19 / 3))
    expect(leafWeight(-19, 2, 0, 0, 1)).toBe(f32(19 / 2))
    expect(leafWeight(-19, 2, 1, 2, 1)).toBe(f32(17 / 3))
    expect(leafWeight(-19, 2, 1, 0, 3)).toBe(0) // H < min_child_weight
    expect(lossChg(1, 2, -18, 4)).toBe(f32(f32(f32(1 / 3) + f32(361 / 3)) - f32(324 / 5)))
  })
})

describe('regularisation and split rules', () => {
  it('lambda changes the leaf weights', () => {
    const t = fit(X1, Y1, { rounds: 1, maxDepth: 1, eta: 1, lambda: 0 }).trees[0]
    expect([t.leafValue[1], t.leafValue[2]]).toEqual([leaf(-1 / 2, 1), leaf(19 / 2, 1)])
  })

  it('alpha soft-thresholds G in weights and gains', () => {
    const t = fit(X1, Y1, { rounds: 1, maxDepth: 1, eta: 1, alpha: 2 }).trees[0]
    expect(t.feature[0]).toBe(0)
    expect([t.leafValue[1], t.leafValue[2]]).toEqual([-0, leaf(17 / 3, 1)]) // −T(1, α=2)/(H+λ) = −0, as in XGBoost
  })

  it('gamma: a split is kept iff loss_chg ≥ gamma (no ½, compared in float32)', () => {
    const loss = lossChg(1, 2, -18, 4)
    const above = loss + 2 ** (Math.floor(Math.log2(loss)) - 23) // the next float32 up
    expect(f32(above)).toBe(above)
    expect(fit(X1, Y1, { rounds: 1, maxDepth: 1, gamma: loss }).trees[0].feature.length).toBe(3)
    const stump = fit(X1, Y1, { rounds: 1, maxDepth: 1, gamma: above, eta: 1 }).trees[0]
    expect(stump.feature.length).toBe(1)
    expect(stump.leafValue[0]).toBe(leaf(18 / 5, 1)) // the root gets eta·w too
  })

  it('min_child_weight: both children need H ≥ mcw; a root below it gets weight 0', () => {
    expect(fit(X1, Y1, { rounds: 1, maxDepth: 1, minChildWeight: 2 }).trees[0].feature.length).toBe(3)
    const noSplit = fit(X1, Y1, { rounds: 1, maxDepth: 1, minChildWeight: 2.5, eta: 1 }).trees[0]
    expect(noSplit.feature.length).toBe(1)
    expect(noSplit.leafValue[0]).toBe(leaf(18 / 5, 1))
    expect(fit(X1, Y1, { rounds: 1, maxDepth: 1, minChildWeight: 5 }).trees[0].leafValue[0]).toBe(0)
  })

  it('ties inside a feature: the first (lowest) bin wins', () => {
    // y = [0, 10, 10, 0]: "x < 1" and "x < 3" have exactly the same float32 gain
    expect(lossChg(0.5, 1, -18, 4)).toBe(lossChg(-18.5, 3, -18, 4))
    const t = fit([[0, 1, 2, 3]], [0, 10, 10, 0], { rounds: 1, maxDepth: 1 }).trees[0]
    expect([t.splitBin[0], t.threshold[0]]).toEqual([0, 1])
  })

  it('ties across features: the lowest feature index wins; constant features never split', () => {
    const t = fit(
      [
        [4, 4, 4, 4],
        [0, 0, 1, 1],
        [0, 0, 1, 1],
      ],
      Y1,
      { rounds: 1, maxDepth: 1 },
    ).trees[0]
    expect(t.feature[0]).toBe(1)
    const c = fit(
      [
        [4, 4, 4, 4],
        [2, 2, 2, 2],
      ],
      Y1,
      { rounds: 3, maxDepth: 3 },
    )
    for (const tree of c.trees) expect(tree.feature.length).toBe(1)
  })

  it('a feature with two values has two bins and splits at the larger value', () => {
    const m = fit([[3, 7, 3, 7, 7, 3]], [1, 5, 1, 5, 5, 1], { rounds: 1, maxDepth: 2 })
    expect(m.trees[0].feature[0]).toBe(0)
    expect(m.trees[0].threshold[0]).toBe(7)
    expect(m.trees[0].feature.length).toBe(3) // its children have one value each
  })

  it('depth 1 grows stumps, whatever the rounds', () => {
    const xs = Array.from({ length: 3 }, (_, f) => Array.from({ length: 50 }, (_, r) => ((r * (f + 3)) % 17) / 17))
    const y = xs[0].map((v, r) => v * 3 - xs[2][r])
    const m = fit(xs, y, { rounds: 20, maxDepth: 1 })
    for (const tree of m.trees) expect(tree.feature.length).toBeLessThanOrEqual(3)
    expect(m.trees.filter((t) => t.feature.length === 3).length).toBeGreaterThan(10)
  })
})

describe('missing values', () => {
  // x = [0, 0, 1, 1, NaN, NaN]; rows with NaN have y like one group or the other
  const X = [[0, 0, 1, 1, NaN, NaN]]

  it('learns missing → right when missing rows look like the right side (forward scan)', () => {
    const m = fit(X, [0, 0, 10, 10, 10, 10], { rounds: 1, maxDepth: 1, eta: 1 })
    const t = m.trees[0]
    expect([t.feature[0], t.splitBin[0], t.threshold[0], t.defaultLeft[0]]).toEqual([0, 0, 1, 0])
    expect(t.leafValue[2]).toBe(leaf(38 / 5, 1)) // right: G = 4·(0.5 − 10) = −38, H = 4
  })

  it('learns missing → left when missing rows look like the left side (backward scan)', () => {
    const m = fit(X, [0, 0, 10, 10, 0, 0], { rounds: 1, maxDepth: 1, eta: 1 })
    const t = m.trees[0]
    expect([t.feature[0], t.splitBin[0], t.threshold[0], t.defaultLeft[0]]).toEqual([0, 0, 1, 1])
    expect(t.leafValue[1]).toBe(leaf(-2 / 5, 1)) // left: the two 0s and the two NaN rows
    const p = predictGbdt(m, Float32Array.from([NaN, 0, 1]), 3)
    expect(p[0]).toBe(p[1])
    expect(p[0]).not.toBe(p[2])
  })

  it('missing rows alone: forward (all values left, missing right) wins the tie with its mirror', () => {
    // the backward candidate "missing left, every value right" (bin −1, threshold v0 − |v0| − 1e-5)
    // is the same partition mirrored, with the same float32 gain; the forward scan comes first
    const m = fit([[0, 1, 2, 3, NaN, NaN]], [5, 5, 5, 5, -20, -20], { rounds: 1, maxDepth: 1 })
    const t = m.trees[0]
    expect([t.splitBin[0], t.defaultLeft[0]]).toEqual([3, 0])
    expect(t.threshold[0]).toBe(f32(3 + f32(3 + f32(1e-5)))) // the sentinel cut: max + (|max| + 1e-5f)
    const p = predictGbdt(m, Float32Array.from([0, 3, 6, NaN, 1e6]), 5)
    expect([p[1], p[2]]).toEqual([p[0], p[0]])
    expect(p[3]).not.toBe(p[0])
    expect(p[4]).toBe(p[3]) // beyond the sentinel a value goes right, like a missing one (XGBoost's rule)
  })

  it('a feature that is all NaN has one bin and never splits', () => {
    const m = fit(
      [
        [NaN, NaN, NaN, NaN],
        [0, 0, 1, 1],
      ],
      Y1,
      { rounds: 2, maxDepth: 2 },
    )
    for (const t of m.trees) for (const f of t.feature) expect(f).not.toBe(0)
  })
})

describe('parameters, hooks and hashing', () => {
  it('rejects out-of-range parameters, naming the field and its range', () => {
    expect(() => resolveGbdtParams({ maxDepth: 0 })).toThrow(/maxDepth must be an integer ≥ 1 and ≤ 16, got 0/)
    expect(() => resolveGbdtParams({ eta: 0 })).toThrow(/eta must be a number > 0 and ≤ 1/)
    expect(() => resolveGbdtParams({ subsample: 1.5 })).toThrow(/subsample/)
    expect(() => resolveGbdtParams({ maxBin: 257 })).toThrow(/maxBin/)
    expect(() => resolveGbdtParams({ rounds: 0, lambda: -1 })).toThrow(/rounds.*lambda/)
    expect(resolveGbdtParams()).toMatchObject({ rounds: 100, maxDepth: 6, eta: 0.1, maxBin: 256, subsample: 0.8, baseScore: 0.5 })
  })

  it("reports rounds, stops with GbdtCancelledError or the caller's error", () => {
    const rounds: number[] = []
    fit(X1, Y1, { rounds: 4, maxDepth: 1 })
    const t = table(X1)
    const data = prepareGbdtData(t.x, Float32Array.from(Y1), 4, 1)
    trainGbdt(data, { ...exact, rounds: 4 }, 1, { onRound: (r, n) => rounds.push(r * 10 + n) })
    expect(rounds).toEqual([14, 24, 34, 44])
    let calls = 0
    expect(() => trainGbdt(data, { ...exact, rounds: 9 }, 1, { shouldStop: () => ++calls > 3 })).toThrow(GbdtCancelledError)
    expect(calls).toBe(4)
    class Mine extends Error {}
    expect(() => trainGbdt(data, { ...exact }, 1, { shouldStop: () => true, cancelError: () => new Mine() })).toThrow(Mine)
  })

  it('FNV-1a 64 matches the reference vectors', () => {
    expect(fnv1a64(new Uint8Array())).toBe('cbf29ce484222325')
    expect(fnv1a64(new TextEncoder().encode('a'))).toBe('af63dc4c8601ec8c')
    expect(fnv1a64(new TextEncoder().encode('foobar'))).toBe('85944171f73967e8')
  })
})
