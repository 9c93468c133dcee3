// A Parquet file with one damaged footer byte (its metadata) is loaded or refused as a TrainpoolError
// naming the file — never a TypeError out of the schema tree (a flipped child count once threw one
// from outside the reader's try, a stack trace in `trainpool bench --data`), never a hang.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { parquetWriteBuffer } from 'hyparquet-writer'
import { afterAll, describe, expect, it } from 'vitest'
import { TrainpoolError } from '@shared/contract'
import { loadDataFile } from './index'

const root = mkdtempSync(join(os.tmpdir(), 'trainpool-parquet-fuzz-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const parquet = new Uint8Array(
  parquetWriteBuffer({
    columnData: [
      { name: 'x', data: [1.5, 2.5, 3], type: 'DOUBLE' },
      { name: 'y', data: [1, 2, 3], type: 'INT32' },
    ],
  }),
)
// the footer: the metadata, then its length (4 bytes) and PAR1
const footerLength = new DataView(parquet.buffer).getUint32(parquet.length - 8, true)
const footerStart = parquet.length - 8 - footerLength

describe('a Parquet file with one damaged metadata byte', () => {
  it('every footer byte, flipped three ways, is loaded or refused naming the file', async () => {
    const store = join(root, 'store')
    const unexpected: string[] = []
    let refused = 0
    for (let at = footerStart; at < parquet.length - 8; at++) {
      for (const mask of [0x02, 0x80, 0xff]) {
        const bytes = parquet.slice()
        bytes[at] ^= mask
        const file = join(root, 'damaged.parquet')
        writeFileSync(file, bytes)
        try {
          await loadDataFile(file, store)
        } catch (err) {
          if (err instanceof TrainpoolError && /damaged\.parquet/.test(err.message)) refused++
          else unexpected.push(`byte ${at - footerStart} ^ 0x${mask.toString(16)}: ${(err as Error).constructor.name}: ${(err as Error).message}`)
        }
      }
    }
    expect(unexpected).toEqual([])
    expect(refused).toBeGreaterThan(0)
  }, 120_000)

  it("the schema root's child count flipped: refused with the reader's reason", async () => {
    // found by the sweep above: this byte holds the root's num_children; the schema tree cannot be built
    const bytes = parquet.slice()
    bytes[footerStart + 11] ^= 0x02
    const file = join(root, 'children.parquet')
    writeFileSync(file, bytes)
    await expect(loadDataFile(file, join(root, 'store-2'))).rejects.toThrow(/children\.parquet starts like a Parquet file but Trainpool cannot read it/)
  })
})
