// Child process for the memory test of the data loader: loads one file into a store's data cache
// and prints this process's peak resident memory in bytes, {"maxRssBytes": N, "rows": R, "columns": C}
// (process.resourceUsage().maxRSS is in KiB), so a test can bound what a load really costs.
import { loadDataFile } from '../data'

const [file, storeDir] = process.argv.slice(2)

async function main(): Promise<void> {
  const info = await loadDataFile(file, storeDir)
  process.stdout.write(`${JSON.stringify({ maxRssBytes: process.resourceUsage().maxRSS * 1024, rows: info.rows, columns: info.columns.length })}\n`)
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
