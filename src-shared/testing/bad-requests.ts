// fast-check generators of malformed requests for every contract method: wrong types, missing and
// unknown fields, huge arrays and strings, NaN/Infinity, negative and zero values, prototype-pollution
// keys, path-traversal run ids, unknown methods. Every generated request is invalid by construction.
import fc from 'fast-check'
import { METHODS } from '../contract/api'
import { backendChoices, type BenchConfig, FAILURE_POLICIES, PRESET_NAMES, presetConfig, TARGETS } from '../contract/config'

export interface BadRequest {
  method: string
  payload: unknown
  /** what the generator broke (for failure messages) */
  what: string
}

/** Objects whose own keys are __proto__ / constructor / prototype (as JSON.parse makes them). */
const pollution = fc
  .constantFrom(
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '{"prototype":{"polluted":true}}',
    '{"__proto__":{"toString":"x","isAdmin":true}}',
    '{"constructor":"x","__proto__":null}',
  )
  .map((text) => JSON.parse(text) as Record<string, unknown>)

const huge = fc.oneof(
  fc.constant(null).map(() => Array.from({ length: 100_000 }, (_, i) => i)),
  fc.constant(null).map(() => 'x'.repeat(200_000)),
  fc.array(fc.integer(), { minLength: 13, maxLength: 300 }),
)

/** Every string some config field accepts: a random string equal to one of them is not bad. */
const ACCEPTED_WORDS: readonly string[] = [...TARGETS, ...FAILURE_POLICIES, ...PRESET_NAMES, 'custom', ...backendChoices()]

/** A value that is wrong for every config field (0 and -0 are valid seeds, so they are not here). */
const badFieldValue = fc.oneof(
  fc.constantFrom(null, true, false, '', 'x', '10', NaN, Infinity, -Infinity, -1, -1e9, 1.5, 1e12, [], {}, [[1]], ['a'], [NaN], [-1], [0.5]),
  fc.string({ maxLength: 20 }).filter((s) => !ACCEPTED_WORDS.includes(s)),
  fc.integer({ min: -1_000_000, max: -1 }),
  fc.double({ noNaN: true, min: 1.000001, max: 1e6 }).filter((v) => !Number.isInteger(v)),
  pollution,
  huge,
)

const CONFIG_FIELDS = Object.keys(presetConfig('smoke')) as (keyof BenchConfig)[]

/** A smoke config broken in one to three ways (bad values, missing required fields, unknown/pollution keys). */
const brokenConfig: fc.Arbitrary<{ config: unknown; what: string }> = fc
  .array(
    fc.oneof(
      fc.record({ kind: fc.constant('set' as const), field: fc.constantFrom(...CONFIG_FIELDS), value: badFieldValue }),
      fc.record({ kind: fc.constant('drop' as const), field: fc.constantFrom(...CONFIG_FIELDS.filter((f) => f !== 'preset')) }),
      fc.record({
        kind: fc.constant('key' as const),
        field: fc.constantFrom('__proto__', 'constructor', 'prototype', 'evil', 'toString', 'hasOwnProperty'),
        value: fc.oneof(pollution, fc.constant(1)),
      }),
    ),
    { minLength: 1, maxLength: 3 },
  )
  .map((changes) => {
    const config: Record<string, unknown> = { ...presetConfig('smoke'), backend: 'wasm' }
    for (const c of changes) {
      if (c.kind === 'drop') delete config[c.field]
      // defineProperty: an own key even for "__proto__" (as JSON.parse would produce)
      else Object.defineProperty(config, c.field, { value: c.value, enumerable: true, configurable: true, writable: true })
    }
    return { config, what: JSON.stringify(changes.map((c) => `${c.kind}:${c.field}`)) }
  })

/** run ids that are not ids: traversal, separators, NUL, too long, not strings */
export const badRunId = fc.oneof(
  fc.constantFrom(
    '',
    '.',
    '..',
    '../x',
    '../../etc/passwd',
    '..%2F..%2Fetc',
    '%2e%2e',
    '/etc/passwd',
    '/tmp',
    'a/b',
    'a\\b',
    '..\\x',
    'a\u0000b',
    '\u0000',
    'x'.repeat(65),
    'run id',
    'ü',
    'C:\\Windows',
  ),
  fc.string({ minLength: 1, maxLength: 30 }).filter((s) => !/^[A-Za-z0-9_-]{1,64}$/.test(s)),
  fc.constantFrom(null, 42, NaN, Infinity, true, [], {}, ['../x']),
  pollution,
)

const nonObject = fc.oneof(fc.constantFrom(null, 0, -1, NaN, Infinity, '', 'x', true, []), fc.integer(), fc.string(), huge)

const RUN_ID_METHODS = ['getRun', 'deleteRun', 'reportPdf'] as const
const VALID_ID = '20250101-000000-abcdef'

export const badRequest: fc.Arbitrary<BadRequest> = fc.oneof(
  // start: not an object, no config, config not an object, broken config, extra keys
  nonObject.map((payload) => ({ method: 'start', payload, what: 'start: payload not an object' })),
  fc.record({ config: nonObject }).map((payload) => ({ method: 'start', payload, what: 'start: config not an object' })),
  fc.constant({ method: 'start', payload: {}, what: 'start: config missing' }),
  brokenConfig.map(({ config, what }) => ({ method: 'start', payload: { config }, what: `start: ${what}` })),
  brokenConfig.map(({ config, what }) => ({ method: 'start', payload: { config }, what: `start: ${what}` })),
  pollution.map((extra) => ({
    method: 'start',
    payload: Object.assign(extra, { config: presetConfig('smoke') }),
    what: 'start: pollution keys beside config',
  })),
  // run-id methods
  fc.tuple(fc.constantFrom(...RUN_ID_METHODS), badRunId).map(([method, runId]) => ({ method, payload: { runId }, what: `${method}: bad runId` })),
  fc
    .tuple(fc.constantFrom(...RUN_ID_METHODS, 'renameRun', 'tagRun', 'exportRun'), nonObject)
    .map(([method, payload]) => ({ method, payload, what: `${method}: payload not an object` })),
  fc
    .tuple(fc.constantFrom(...RUN_ID_METHODS), pollution)
    .map(([method, extra]) => ({ method, payload: Object.assign(extra, { runId: VALID_ID }), what: `${method}: pollution keys` })),
  fc.tuple(badRunId, fc.string()).map(([runId, name]) => ({ method: 'renameRun', payload: { runId, name }, what: 'renameRun: bad runId' })),
  fc
    .oneof(fc.string({ minLength: 501, maxLength: 2000 }), fc.constantFrom(null, 1, [], {}, NaN))
    .map((name) => ({ method: 'renameRun', payload: { runId: VALID_ID, name }, what: 'renameRun: bad name' })),
  fc
    .oneof(
      fc.array(fc.string(), { minLength: 51, maxLength: 200 }),
      fc.array(fc.string({ minLength: 201, maxLength: 300 }), { minLength: 1, maxLength: 2 }),
      fc.constantFrom('tag', null, 7, [1, 2], [null], [NaN], {}),
      huge,
    )
    .map((tags) => ({ method: 'tagRun', payload: { runId: VALID_ID, tags }, what: 'tagRun: bad tags' })),
  fc
    .constantFrom('pdf', 'xml', '', null, 1, 'JSON', '../json')
    .map((format) => ({ method: 'exportRun', payload: { runId: VALID_ID, format }, what: 'exportRun: bad format' })),
  fc
    .tuple(
      badRunId.filter((v) => v !== undefined),
      fc.boolean(),
    )
    .map(([runId]) => ({ method: 'cancel', payload: { runId }, what: 'cancel: bad runId' })),
  // data sets: a sha256 that is not 64 lowercase hex digits (the cache's folder name)
  fc
    .oneof(fc.constantFrom('', 'A'.repeat(64), 'a'.repeat(63), 'a'.repeat(65), 'g'.repeat(64), `../${'a'.repeat(61)}`, null, 1, []), badRunId)
    .map((sha256) => ({ method: 'dataSetInfo', payload: { sha256 }, what: 'dataSetInfo: bad sha256' })),
  // advice: a target out of range (0, negative, fractional, above 1e6, not a number) or a bad run id
  fc
    .tuple(
      fc.constantFrom('advise', 'verifyAdvice'),
      fc.constantFrom('models', 'size'),
      fc.constantFrom(0, -1, -500, 1.5, 1_000_001, 1e9, NaN, Infinity, '500', null, [], {}),
    )
    .map(([method, field, value]) => ({ method, payload: { runId: VALID_ID, models: 500, size: 50_000, [field]: value }, what: `${method}: bad ${field}` })),
  fc
    .tuple(fc.constantFrom('advise', 'verifyAdvice'), badRunId)
    .map(([method, runId]) => ({ method, payload: { runId, models: 500, size: 50_000 }, what: `${method}: bad runId` })),
  fc
    .tuple(fc.constantFrom('advise', 'verifyAdvice'), pollution)
    .map(([method, extra]) => ({ method, payload: Object.assign(extra, { runId: VALID_ID, models: 5, size: 1000 }), what: `${method}: pollution keys` })),
  // methods that take no payload, given one
  fc
    .tuple(fc.constantFrom('capabilities', 'listRuns', 'currentRun', 'dataSets', 'chooseDataFile'), fc.oneof(nonObject, pollution, fc.constant({})))
    .map(([method, payload]) => ({ method, payload, what: `${method}: unexpected payload` })),
  // unknown methods, including prototype names
  fc
    .oneof(fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'rm -rf /', '', 'START', 'shutdown', 'onEvent', 'prototype'), fc.string())
    .filter((m) => !(METHODS as string[]).includes(m))
    .map((method) => ({ method, payload: undefined, what: `unknown method ${JSON.stringify(method)}` })),
)

/** A snapshot of Object.prototype to prove nothing was added to it. */
export function prototypeSnapshot(): string {
  return (
    JSON.stringify(Object.getOwnPropertyNames(Object.prototype).sort()) +
    String(({} as Record<string, unknown>).polluted) +
    String(({} as Record<string, unknown>).isAdmin)
  )
}
