// `trainpool export-models RUN_ID (--best | --all) --out DIR [--store DIR]`: the trained models a
// stored run kept, written in standard formats (export/models.ts: trees as XGBoost 1.7 JSON, which
// xgboost.Booster().load_model reads; MLPs as ONNX, which ONNX Runtime runs). Exit 2 with the reason
// for a run that kept none or whose models.json is unsound, or an --out that is not a folder (a link
// is refused, also one swapped in while the files are written: writeModelSet); all files or none,
// nothing left behind; 1 when the disk fails.
import { constants, promises as fs, type Stats } from 'node:fs'
import { basename, join } from 'node:path'
import { type Task, TrainpoolError } from '@shared/contract'
import { eachModelFile, type ModelFile } from '../export/models'
import { describeFileType } from '../store/regular-file'
import { RunStore, defaultStoreDir } from '../store/run-store'
import { EXIT } from './bench-command'
import { failure, OutputError, outputFolder, removeFolders } from './output-files'

export interface ExportModelsFlags {
  best?: boolean
  all?: boolean
  out?: string
  store?: string
}

export async function exportModelsCommand(runId: string, flags: ExportModelsFlags): Promise<number> {
  const fail = (message: string) => {
    process.stderr.write(`trainpool export-models: ${message}\n`)
    return EXIT.usage
  }
  if (flags.best && flags.all) return fail('--best and --all do not combine: choose one')
  if (!flags.out) return fail('--out DIR is required: the folder the model files are written to')
  const store = new RunStore(flags.store ?? defaultStoreDir())
  try {
    const run = await store.get(runId)
    // one model read, built and written at a time: memory follows the largest model, not the file
    const written = await store.withModels(runId, async (kept) => {
      const files = eachModelFile(run, kept, flags.all ? 'all' : 'best')
      const { dir, made } = await outputFolder('--out', flags.out!)
      try {
        return await writeModelSet(dir, files)
      } catch (err) {
        await removeFolders(made)
        throw err
      }
    })
    for (const path of written.paths) process.stdout.write(`${path}\n`)
    const { paths, mimeType } = written
    const how =
      mimeType === 'application/onnx' ? 'ONNX: onnxruntime.InferenceSession(path), input "features"' : 'XGBoost JSON: xgboost.Booster().load_model(path)'
    process.stderr.write(`wrote ${paths.length} model${paths.length === 1 ? '' : 's'} of run ${runId} (${how}${classifierWords(run.task, mimeType)})\n`)
    return EXIT.ok
  } catch (err) {
    if (err instanceof TrainpoolError) return fail(err.message)
    if (err instanceof OutputError) {
      process.stderr.write(`trainpool export-models: ${err.message}\n`)
      return EXIT[err.exit]
    }
    throw err
  }
}

const sameFile = (a: Stats, b: Stats): boolean => a.dev === b.dev && a.ino === b.ino

/**
 * Writes the model files into the folder `dir` named when it was checked, all or none, nothing left
 * behind. The folder is opened (no link followed) and reached through that descriptor
 * (/proc/self/fd/N, Linux: Node has no openat), so a path swapped for a link meanwhile leads nowhere
 * new; each file is built in a private temporary folder inside it, then renamed into place, and the
 * set is taken back if `dir` no longer names the opened folder (the printed paths would lie). Where
 * there is no /proc, `dir` is checked against the opened folder before every rename and at the end.
 */
async function writeModelSet(dir: string, files: AsyncIterable<ModelFile>): Promise<{ paths: string[]; mimeType: string | undefined }> {
  let handle: fs.FileHandle
  try {
    handle = await fs.open(dir, constants.O_RDONLY | constants.O_DIRECTORY | (constants.O_NOFOLLOW ?? 0))
  } catch (err) {
    throw failure('--out', dir, 'open the folder', err)
  }
  try {
    const opened = await handle.stat()
    const viaDescriptor = `/proc/self/fd/${handle.fd}`
    const base = (await fs.stat(viaDescriptor).then(
      (s) => sameFile(s, opened),
      () => false,
    ))
      ? viaDescriptor
      : dir
    const stillTheFolder = async (): Promise<void> => {
      const now = await fs.lstat(dir).catch(() => null)
      if (now && now.isDirectory() && sameFile(now, opened)) return
      const what = now ? describeFileType(now) : 'gone'
      throw new OutputError(`--out ${dir} was replaced while the models were written (it is now ${what}): nothing was exported`, 'usage')
    }
    let temp: string
    try {
      temp = await fs.mkdtemp(join(base, '.trainpool-export-'))
    } catch (err) {
      throw failure('--out', dir, 'write the file', err)
    }
    const names: string[] = []
    const placed: string[] = []
    let mimeType: string | undefined
    try {
      for await (const file of files) {
        const name = file.fileName
        if (name !== basename(name) || name === '.' || name === '..' || names.includes(name)) throw new Error(`${name} is not a plain, unique file name`)
        try {
          const created = await fs.open(join(temp, name), 'wx')
          try {
            await created.writeFile(file.content)
            await created.sync()
          } finally {
            await created.close()
          }
        } catch (err) {
          throw failure('--out', join(dir, name), 'write the file', err)
        }
        names.push(name)
        mimeType ??= file.mimeType
      }
      for (const name of names) {
        if (base === dir) await stillTheFolder()
        try {
          // a folder of that name is not replaced (EISDIR); a file or a link is, never written through
          await fs.rename(join(temp, name), join(base, name))
        } catch (err) {
          throw failure('--out', join(dir, name), 'write the file', err)
        }
        placed.push(name)
      }
      await stillTheFolder()
      return { paths: names.map((name) => join(dir, name)), mimeType }
    } catch (err) {
      // all or none; through a bare path only while it still names the folder (else it could remove another folder's files)
      const reachable =
        base !== dir ||
        (await stillTheFolder().then(
          () => true,
          () => false,
        ))
      if (reachable) for (const name of placed) await fs.rm(join(base, name), { force: true }).catch(() => undefined)
      throw err
    } finally {
      await fs.rm(temp, { recursive: true, force: true }).catch(() => undefined)
    }
  } finally {
    await handle.close()
  }
}

/** What a classifier's files output, in the user's class names (their order is in each file's trainpool_classes too); '' for a regressor. */
function classifierWords(task: Task | undefined, mimeType: string | undefined): string {
  if (!task || task.objective === 'regression') return ''
  const output = mimeType === 'application/onnx' ? 'output "probabilities"' : 'predict()'
  if (task.objective === 'binary') return `; ${output} is the probability of class ${task.classes[1]} (classes ${task.classes.join(', ')}: trainpool_classes)`
  return `; ${output} is one probability per class, in the order ${task.classes.join(', ')} (trainpool_classes)`
}
