// The user's own data sets, on the Node side: loading a CSV or Parquet file into the store's data
// cache, listing and describing what is cached, and reading a cached table's columns (workers).
// The shells and the service call only what is exported here (README.md: the API and the cache).
export { loadDataFile, loadIntoCache, sha256File, type LoadOptions } from './load-data-file'
export { dataSetInfo, listDataSets, readCachedInfo, removeFromCache, tablePath, cacheDir, datasetsDir } from './cache'
export { classValuesOf, resolveDataSource, type ResolvedData } from './resolve-source'
