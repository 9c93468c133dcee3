// The train/test split, on its own so that families and the config both import it without a cycle.

/** Train/test row counts: the last round(size × testSplit) rows are the test set. */
export function splitRows(size: number, testSplit: number): { train: number; test: number } {
  const test = Math.round(size * testSplit)
  return { train: size - test, test }
}
