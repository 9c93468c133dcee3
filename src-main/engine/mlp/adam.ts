// Adam as every MLP engine runs it: FusedMlp's constants, and each fused model's learning rate (a
// model set's lr grid fuses into one program, each model its own rate).

export interface AdamSettings {
  /** one learning rate for every fused model, or one per model (a model set's configurations) */
  lr: number | readonly number[]
  beta1: number
  beta2: number
  epsilon: number
}

export const ADAM_DEFAULTS = { beta1: 0.9, beta2: 0.999, epsilon: 1e-7 } as const

/** The learning rate of each model of a job: one number when they agree (today's program), else one per model. */
export function learningRates(
  workload: { model: { lr: number } },
  indices: readonly number[],
  options?: { paramsOf?: (index: number) => object },
): number | number[] {
  const lrs = indices.map((i) => (options?.paramsOf?.(i) as { lr?: number } | undefined)?.lr ?? workload.model.lr)
  return lrs.every((l) => l === lrs[0]) ? (lrs[0] ?? workload.model.lr) : lrs
}
