// `trainpool export-models RUN_ID (--best | --all) --out DIR [--store DIR]`: the trained models a
// stored run kept, written in standard formats (export/models.ts: trees as XGBoost 1.7 JSON, which
// xgboost.Booster().load_model reads; MLPs as ONNX, which ONNX Runtime runs). Exit 2 with the reason
// for a run that kept none or whose models.json is unsound, or an --out that is not a folder (a link
// is refused); files are written as output-files.ts writes them, all or none; 1 when the disk fails.
import { promises as fs } from 'node:fs'
import { type Task, TrainpoolError } from '@shared/contract'
import { modelFiles } from '../export/models'
import { RunStore, defaultStoreDir } from '../store/run-store'
import { EXIT } from './bench-command'
import { OutputError, outputFolder, removeFolders, writeInFolder } from './output-files'

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
    const files = modelFiles(run, await store.getModels(runId), flags.all ? 'all' : 'best')
    const { dir, made } = await outputFolder('--out', flags.out)
    const written: string[] = []
    try {
      for (const f of files) written.push(await writeInFolder('--out', dir, f.fileName, f.content))
    } catch (err) {
      // all or none: a half-exported set is not left behind
      for (const path of written) await fs.rm(path, { force: true })
      await removeFolders(made)
      throw err
    }
    for (const path of written) process.stdout.write(`${path}\n`)
    const how =
      files[0]?.mimeType === 'application/onnx'
        ? 'ONNX: onnxruntime.InferenceSession(path), input "features"'
        : 'XGBoost JSON: xgboost.Booster().load_model(path)'
    process.stderr.write(
      `wrote ${files.length} model${files.length === 1 ? '' : 's'} of run ${runId} (${how}${classifierWords(run.task, files[0]?.mimeType)})\n`,
    )
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

/** What a classifier's files output, in the user's class names (their order is in each file's trainpool_classes too); '' for a regressor. */
function classifierWords(task: Task | undefined, mimeType: string | undefined): string {
  if (!task || task.objective === 'regression') return ''
  const output = mimeType === 'application/onnx' ? 'output "probabilities"' : 'predict()'
  if (task.objective === 'binary') return `; ${output} is the probability of class ${task.classes[1]} (classes ${task.classes.join(', ')}: trainpool_classes)`
  return `; ${output} is one probability per class, in the order ${task.classes.join(', ')} (trainpool_classes)`
}
