// `auto`'s calibration (issue 32): per model family, a small fixed workload timed on each backend
// `auto` may pick, on warm workers with the runner's clock; `auto` is the fastest. One file per
// (machine, Trainpool version) in the store (store/calibration-cache.ts), validated when read back:
// a damaged one is ignored and rewritten. The logic over these records is src-shared/calibration.ts.
import { z } from 'zod'
import { ConcreteBackendSchema } from './config'

// 2: the trees' work unit weighs a split node's bins 2.7× (families/gbdt.ts NODE_BIN_PASSES); a file of 1 holds
// work counted the old way, and the speed fitted to it would mispredict: it is measured again.
// 3: a short job is timed again with more steps (calibration.ts CALIBRATION_JOB): a file of 2 holds steps
// that carry a 4-step job's fixed costs
export const CALIBRATION_VERSION = 3

/** How `auto` picks: the calibration's fastest (default), or the family's table order (TRAINPOOL_AUTO=order). */
export const AUTO_RULES = ['calibrated', 'order'] as const
export type AutoRule = (typeof AUTO_RULES)[number]

/** What a calibration is valid for: this machine as the probe sees it. A change of any field calibrates again. */
export const MachineKeySchema = z
  .object({
    host: z.string(),
    cpu: z.string(),
    cpuCount: z.number().int(),
    /** the GPU backends' adapters as the probe named them (webgpu's adapter, tensorflow's device) */
    adapters: z.array(z.string()),
    /** the backends available here: one installed or gone changes what `auto` can pick */
    backends: z.array(z.string()),
  })
  .strict()
export type MachineKey = z.infer<typeof MachineKeySchema>

const msPerStep = z.number().positive().finite()

/** One backend of a family as the calibration found it: both timings, one (the other not worth measuring), or skipped. */
export const BackendTimingSchema = z
  .object({
    backend: z.string().min(1).max(64),
    /** the device it ran on (adapter, GPU or CPU model); null when it was not started */
    device: z.string().nullable(),
    /** ms per step of one model alone: the median run ÷ its steps (a short job timed again with more: CALIBRATION_JOB); null when not measured */
    oneModelStepMs: msPerStep.nullable(),
    /** ms per step of the workload's models fused in one program; null when not measured */
    fusedStepMs: msPerStep.nullable(),
    /**
     * ms per step of the models split over the workload's `workers` workers in parallel, each a fused
     * share (batched W = the cores); null when not measured — workers that share a device, one core,
     * or cut off
     */
    spreadStepMs: msPerStep.nullable(),
    /** a batched step cut off before it was measured takes at least this: the cut-off run's time ÷ its steps; null otherwise */
    atLeastStepMs: msPerStep.nullable(),
    /** why it was skipped, or why part of it was not measured; null when measured whole */
    note: z.string().nullable(),
  })
  .strict()
export type BackendTiming = z.infer<typeof BackendTimingSchema>

/** The workload every backend of a family was timed on, with its work per step (the estimate's calibrated speed is fitted to it). */
export const CalibrationWorkloadSchema = z
  .object({
    /** "50 models 100→64→1, Adam lr 0.01, batch 512, 1 epoch on 2 560 rows" */
    text: z.string(),
    size: z.number().int().positive(),
    models: z.number().int().positive(),
    /** the workers a backend whose workers do not share a device spreads the fused models over: this machine's cores, at most `models` */
    workers: z.number().int().positive(),
    /** steps of one job (progress units: the MLP's mini-batches, the trees' rounds) */
    steps: z.number().int().positive(),
    /** what one step is called ("step", "round") */
    step: z.string(),
    /** work of one step, in the family's unit, of one model and of the fused models */
    oneModelWork: z.number().nonnegative(),
    fusedWork: z.number().nonnegative(),
  })
  .strict()
export type CalibrationWorkload = z.infer<typeof CalibrationWorkloadSchema>

export const FamilyCalibrationSchema = z
  .object({
    kind: z.string(),
    calibratedAt: z.string(),
    workload: CalibrationWorkloadSchema,
    /** every backend of the family, in its table's order */
    backends: z.array(BackendTimingSchema),
    /** what `auto` picks; null when no backend it may pick could be measured */
    auto: z.string().nullable(),
    /** the choice in words, with the numbers it rests on */
    reason: z.string(),
  })
  .strict()
export type FamilyCalibration = z.infer<typeof FamilyCalibrationSchema>

/** The cache file: one machine, one Trainpool version, each family calibrated so far. */
export const CalibrationFileSchema = z
  .object({
    version: z.literal(CALIBRATION_VERSION),
    trainpool: z.string(),
    machine: MachineKeySchema,
    families: z.record(z.string(), FamilyCalibrationSchema),
  })
  .strict()
export type CalibrationFile = z.infer<typeof CalibrationFileSchema>

/** What the shells are told: the rule, and each family's calibration on this machine ({} before the first). */
export interface CalibrationState {
  rule: AutoRule
  families: Record<string, FamilyCalibration>
}

/** A run with backend `auto`: the backend it ran on and why (the result's environment.auto). */
export const AutoChoiceSchema = z.object({
  backend: ConcreteBackendSchema,
  reason: z.string(),
  /** when the calibration it rests on was made; null when `auto` followed the table's order */
  calibratedAt: z.string().nullable(),
})
export type AutoChoice = z.infer<typeof AutoChoiceSchema>
