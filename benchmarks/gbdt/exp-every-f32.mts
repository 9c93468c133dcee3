// The classifier math's exp on every float32 (issue 38): the two scans too long for the test suite
// (minutes each), run by hand — `npm run check:exp-f32`.
//  1. Every float32 x through f32(Math.exp(x)): the inputs whose float32 rounding changes within
//     Math.exp(x)·(1 ± 2^-50) must be exactly HARD_EXP_INPUTS (the list the test suite checks against an
//     exact BigInt exp), and outside the ranges expF32 computes f32(Math.exp(x)) must be expF32's fixed
//     1, ∞, 0 or NaN (≈ 2 min).
//  2. expF32 on the device (WebGPU: lavapipe here) for every float32 it computes, against
//     f32(Math.exp(x)) bit for bit (≈ 3 min on lavapipe; skipped with its reason when no adapter).
// Exit 0 when both hold, 1 with the first differences otherwise.
import { differences, EXP_COMPUTED_BITS, HARD_EXP_INPUTS, runKernel, unaryKernel } from '../../src-main/testing/objective-wgsl-harness.ts'
import { noDevice, openForTests } from '../../src-main/testing/webgpu-trees.ts'

const f32 = Math.fround
const log = (s: string) => process.stdout.write(s + '\n')
let failed = false

// 1. every float32 in JavaScript
{
  const started = performance.now()
  const chunk = 1 << 20
  const xs = new Uint32Array(chunk)
  const xf = new Float32Array(xs.buffer)
  const [positive, negative] = EXP_COMPUTED_BITS
  const hard: number[] = []
  const outside: string[] = []
  for (let base = 0; base < 2 ** 32; base += chunk) {
    for (let i = 0; i < chunk; i++) xs[i] = base + i
    for (let i = 0; i < chunk; i++) {
      const x = xf[i]
      const d = Math.exp(x)
      if (f32(d * (1 - 2 ** -50)) !== f32(d * (1 + 2 ** -50)) && !Number.isNaN(d)) hard.push(xs[i])
      if ((xs[i] >= positive[0] && xs[i] <= positive[1]) || (xs[i] >= negative[0] && xs[i] <= negative[1])) continue
      const branch = Number.isNaN(x) ? NaN : Math.abs(x) < 2 ** -25 ? 1 : x > 0 ? Infinity : 0
      if (!Object.is(f32(d), branch) && outside.length < 20) outside.push(`exp(${x}) = ${f32(d)}, expF32 ${branch}`)
    }
  }
  const same = hard.length === HARD_EXP_INPUTS.length && hard.every((u, i) => u === HARD_EXP_INPUTS[i])
  if (!same || outside.length) failed = true
  log(
    `every float32 through f32(Math.exp): ${hard.length} rounding-hard inputs (${same ? 'the list' : `NOT the list: ${hard.join(', ')}`}), ${outside.length ? `outside the computed ranges: ${outside.join('; ')}` : "outside the computed ranges expF32's fixed values"} (${((performance.now() - started) / 1000).toFixed(0)} s)`,
  )
}

// 2. expF32 on the device for every float32 it computes
{
  const dev = await openForTests()
  if (noDevice(dev)) log(`expF32 on the device: not run (${dev.why})`)
  else {
    const started = performance.now()
    const chunk = 1 << 21
    const xs = new Uint32Array(chunk)
    const xf = new Float32Array(xs.buffer)
    const want = new Uint32Array(chunk)
    const wantF = new Float32Array(want.buffer)
    const bad: string[] = []
    let count = 0
    for (const [lo, hi] of EXP_COMPUTED_BITS) {
      for (let base = lo; base <= hi && bad.length === 0; base += chunk) {
        for (let i = 0; i < chunk; i++) xs[i] = Math.min(base + i, hi)
        for (let i = 0; i < chunk; i++) wantF[i] = Math.exp(xf[i])
        const got = await runKernel(dev.gpu!, 'check:objective-exp', unaryKernel('expF32'), [xs], chunk, chunk)
        bad.push(...differences(got, want, (i) => `exp(${xf[i]}) [${xs[i].toString(16)}]`))
        count += Math.min(chunk, hi - base + 1)
      }
    }
    dev.gpu!.release()
    if (bad.length) failed = true
    log(
      `expF32 on the device: ${count} inputs, ${bad.length ? `differences: ${bad.join('; ')}` : 'every one equal to f32(Math.exp(x))'} (${((performance.now() - started) / 1000).toFixed(0)} s)`,
    )
  }
}
process.exit(failed ? 1 : 0)
