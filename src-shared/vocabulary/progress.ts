// Training progress, one type from the worker to the screen: how many of a job's steps are done, of
// how many, in the family's unit (a mini-batch for the MLP, a boosting round for trees), and the
// latest training loss when the family has one. Families turn it into words (describeProgress).
export interface Progress {
  done: number
  total: number
  /** the family's unit of progress, singular ("batch", "round") */
  unit: string
  /** mean per-model training loss of the last finished pass, when known */
  loss?: number | null
}
