// The train/test split, below the families and the contract, so both import it.

/** Train/test row counts: the last round(size × testSplit) rows are the test set. */
export function splitRows(size: number, testSplit: number): { train: number; test: number } {
  const test = Math.round(size * testSplit)
  return { train: size - test, test }
}
