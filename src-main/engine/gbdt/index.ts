// Trainpool's gradient-boosted-trees engine: XGBoost 1.7 `hist`, squared error, binary:logistic and
// multi:softprob, depth-wise, in plain TypeScript (no tfjs, nothing else from the app but the seeded
// RNG, the gbdt family's parameters and the task's words). Its API, with an example of each call:
// README.md, "API".
export { prepareGbdtData, type GbdtData } from './binning'
export { GBDT_DEFAULTS, gbdtMemory, gbdtParamProblems, resolveGbdtParams, type GbdtMemory, type GbdtMemoryQuery, type GbdtParams } from '@shared/families/gbdt'
export { computeCuts, type GbdtCuts } from './quantile'
export { QUANT_BITS, QUANT_MAX_ROWS, quantExponent, quantise } from './quantise'
export { GbdtCancelledError, type HeldOutRows, MAX_TRAIN_ROWS } from './rules'
export {
  GBDT_PER_MODEL_PARAMS,
  trainGbdt,
  trainGbdtGroup,
  trainGbdtGroupAsync,
  type GbdtPerModelParams,
  type GbdtTrainOptions,
  type GbdtTrainStats,
} from './train'
export {
  marginsPerRow,
  meanSquaredError,
  outputsOfMargins,
  predictGbdt,
  predictGbdtOutputs,
  treeHash,
  treesArtifact,
  type GbdtModel,
  type GbdtTree,
} from './tree'
export { baseScoreProblem, initialMargin, taskProblem, treesPerRound, type GbdtTask } from './objective'
