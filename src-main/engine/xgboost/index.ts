// The `xgboost` backend of the gbdt family: the user's own libxgboost through koffi (FFI), in
// worker processes only. library.ts finds and binds it, xgboost-runtime.ts picks device and threads (and
// answers the probe), xgboost-train.ts trains one booster per model. The family's worker half
// (engine/families/gbdt.ts) calls these when its runtime is an xgboost one.
export { HOW_TO_GET_XGBOOST, loadXgboost, XGBoostError, XGBoostNotFoundError, type Handle, type XgbApi, type XgbLibrary } from './library'
export {
  isXgboostRuntime,
  nthreadFor,
  nvidiaGpus,
  probeXgboost,
  resolveDevice,
  startXgboostRuntime,
  type XgbDevice,
  type XgboostRuntime,
} from './xgboost-runtime'
export { createXgbData, freeXgbData, trainXgbModel, xgbParams, type XgbData, type XgbTrained, type XgbTrainHooks } from './xgboost-train'
