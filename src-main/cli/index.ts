// `trainpool` command line: bench, serve, advise, report, export-models and calibrate.
import { Command, CommanderError, Option } from 'commander'
import { ADVICE_LIMITS, PRESET_NAMES, STRATEGIES } from '@shared/contract'
import { acceptedText, allFamilies, familyKinds } from '@shared/families'
import { adviseCommand } from './advise-command'
import { EXIT, benchCommand } from './bench-command'
import { calibrateCommand } from './calibrate-command'
import { FLAG_HELP, launcherOptions } from './options'
import { exportModelsCommand } from './export-models-command'
import { reportCommand } from './report-command'
import { serveCommand } from './serve-command'
import { workerCommand } from './worker-command'

declare const __TRAINPOOL_VERSION__: string | undefined
const version = typeof __TRAINPOOL_VERSION__ === 'string' ? __TRAINPOOL_VERSION__ : (process.env.npm_package_version ?? 'dev')

export function buildProgram(): Command {
  const program = new Command('trainpool')
    .description('Train many models at once and measure honestly how much faster each strategy is.')
    .version(version)
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) })
  for (const add of [addBench, addServe, addWorker, addAdvise, addReport, addExportModels, addCalibrate]) add(program)
  return program
}

/** `trainpool bench`: the run flags, then each family's hyperparameters from its field specs */
function addBench(program: Command): void {
  const bench = program
    .command('bench')
    .description('run the benchmark headless: sequential vs pool vs batched')
    .addOption(new Option('--preset <name>', `preset: ${PRESET_NAMES.join(' | ')}`))
    .option('--sizes <list>', 'data sizes (rows), e.g. 10000,50000')
    .option('--models <list>', 'model counts, e.g. 50')
    .option('--sweep <what>', 'models: measure N = 1, 2, 4, … up to --models N (a W larger than N is skipped at that N)')
    .option(
      '--gpus <which>',
      'all | none | GPU indices (0,2): each worker pinned to one of them by its own CUDA_VISIBLE_DEVICES, round-robin (nvidia-smi lists them)',
    )
    .option('--workers-per-gpu <k>', 'with --gpus: at most K workers on each GPU')
    .option('--launcher <where>', launcherOptions().launcherHelp)
    .option(
      '--listen <host:port>',
      'with --launcher other than local: where the worker socket listens, an address the workers reach (default 127.0.0.1:0: this machine only; 0.0.0.0 warns)',
    )
    .option(
      '--seeds <n>',
      'a model set: models per configuration, each from its own seed (1 to 100); with several values of a field (--eta 0.1,0.3; --hidden 32/64) a grid',
    )
    .option(
      '--folds <k>',
      'a model set: K-fold cross-validation over the training rows (2 to 10; stratified by class for a classifier); models ranked by the validation metric',
    )
    .option('--workers <list>', 'worker counts for pool and batched, e.g. 1,2,5')
    .option('--strategies <list>', `comma-separated: ${STRATEGIES.join(',')}`)
    .option('--backend <name>', FLAG_HELP.backend)
    .option('--repeats <n>', 'repeats per measurement (median reported)')
    .option('--seed <n>', 'data seed; model i uses seed + i + 1')
    .option('--data <file>', "train on your own CSV or Parquet file (loaded once into the store's data cache); needs --target")
    .option('--target <name>', FLAG_HELP.target)
    .option('--features <n|list>', FLAG_HELP.features)
    .option('--objective <name>', FLAG_HELP.objective)
    .option('--metric <name>', FLAG_HELP.metric)
    .option('--classes <k>', FLAG_HELP.classes)
    .option('--early-stopping <rounds>', FLAG_HELP.earlyStopping)
    .option('--validation <fraction>', FLAG_HELP.validation)
    .option('--search <method>', FLAG_HELP.search)
    .option('--factor <eta>', FLAG_HELP.factor)
    .option('--min-rounds <r>', FLAG_HELP.minRounds)
    .option('--exclude <list>', 'with --data: columns that are not features, comma-separated')
    .option('--impute <mode>', FLAG_HELP.impute)
    .option('--test-split <x>', 'fraction of rows held out to score the models on')
    .option('--on-failure <policy>', 'stop | continue when a worker dies')
    .option('--json <file>', 'write the full result JSON; - for standard output (the summary then goes to stderr)')
    .option('--csv <file>', 'write one CSV row per measurement; - for standard output (the summary then goes to stderr)')
    .option('--store <dir>', 'run history folder (default ~/.trainpool/runs)')
    .option('--no-save', 'do not keep this run in the history')
    .option('--model <kind>', `model family: ${familyKinds().join(' | ')}`)
  // each launcher's own flags, from its field specs (contract/launcher.ts)
  for (const { option, help } of launcherOptions().flags) bench.option(option, help)
  // each model family's hyperparameters, from its field specs
  const seen = new Set<string>()
  for (const family of allFamilies()) {
    for (const f of family.fields) {
      if (seen.has(f.flag)) continue
      seen.add(f.flag)
      const grid = f.vary ? (f.type === 'intList' ? '; alternatives separated by / make a grid' : '; several, comma-separated, make a grid') : ''
      bench.option(`${f.flag} <${f.type === 'intList' ? 'list' : 'n'}>`, `${f.help} (${family.shortLabel}; ${acceptedText(f)}${grid})`)
    }
  }
  bench.action(async (flags) => {
    process.exitCode = await benchCommand(flags, version)
  })
}

/** `trainpool serve`: browser mode */
function addServe(program: Command): void {
  program
    .command('serve')
    .description('browser mode: serve the UI on 127.0.0.1 with a token-locked URL (as Jupyter does)')
    .option('--port <n>', 'port (0 picks a free one)', '7878')
    .option('--host <addr>', 'address to bind; 0.0.0.0 exposes it to other machines (a warning is printed)', '127.0.0.1')
    .option(
      '--listen <host:port>',
      'runs with a launcher (Slurm, …): where the worker socket listens, an address the workers reach (default 127.0.0.1:0: this machine only)',
    )
    .option('--store <dir>', 'run history folder (default ~/.trainpool/runs)')
    .option('--max-upload <bytes>', 'largest data file the page may upload (bytes, or 500MiB, 2GiB; default 2GiB)')
    .option(
      '--upload-idle-timeout <seconds>',
      'give an upload up after this long without a byte arriving (default 60; a slow upload that keeps moving is never cut off)',
    )
    .action(async (flags) => {
      process.exitCode = await serveCommand(flags, version)
    })
}

/** `trainpool worker`: a remote worker dialling back */
function addWorker(program: Command): void {
  program
    .command('worker')
    .description('run one training worker for a coordinator on another machine (Slurm tasks run this); its index and token come in the environment')
    .requiredOption('--connect <url>', "the coordinator's worker socket, ws://HOST:PORT/worker")
    .action(async (flags: { connect: string }) => {
      process.exitCode = await workerCommand(flags.connect)
    })
}

/** `trainpool advise` */
function addAdvise(program: Command): void {
  program
    .command('advise')
    .description('which strategy and W to use for N models at a data size, predicted from a run (best from a sweep: bench --sweep models)')
    .argument('<run>', 'run id in the store, or a result JSON file')
    .option('--models <n>', `the target model count (1 to ${ADVICE_LIMITS.models.max})`)
    .option('--size <rows>', `the target data size in rows (a size the run measured; ${ADVICE_LIMITS.size.min} to ${ADVICE_LIMITS.size.max})`)
    .option('--verify', 'run the recommended and runner-up options at the target and print predicted vs measured (stored with the run)')
    .option('--store <dir>', 'run history folder (default ~/.trainpool/runs)')
    .option('--json <file>', 'write the advice (with --verify: the check) as JSON; - for standard output')
    .action(async (target: string, flags) => {
      process.exitCode = await adviseCommand(target, flags, version)
    })
}

/** `trainpool report` */
function addReport(program: Command): void {
  program
    .command('report')
    .description('a stored run (RUN_ID) or a result file (FILE.json) as a PDF report, a Markdown table, JSON or CSV')
    .argument('<run>', 'run id in the store, or a result JSON file')
    .option('--pdf <file>', 'write the PDF report (renders in headless Chromium; TRAINPOOL_CHROMIUM picks the browser); - for standard output')
    .option('--md', 'print the Markdown summary table (hyperfine-style, with a relative column)')
    .option('--json <file>', 'write the full result JSON; - for standard output')
    .option('--csv <file>', 'write one CSV row per measurement; - for standard output')
    .option('--leaderboard <file>', 'a model set: write its leaderboard as CSV (one row per configuration, best first); - for standard output')
    .option('--store <dir>', 'run history folder (default ~/.trainpool/runs)')
    .action(async (target: string, flags) => {
      process.exitCode = await reportCommand(target, flags)
    })
}

/** `trainpool export-models` */
function addExportModels(program: Command): void {
  program
    .command('export-models')
    .description('the trained models a stored run kept, as files real libraries load (trees: XGBoost 1.7 JSON; MLPs: ONNX)')
    .argument('<run>', 'run id in the store')
    .option('--best', "the best model (a model set: the best configuration's best; else the lowest test MSE) — the default")
    .option('--all', 'every kept model')
    .option('--out <dir>', 'folder to write the model files to')
    .option('--store <dir>', 'run history folder (default ~/.trainpool/runs)')
    .action(async (runId: string, flags) => {
      process.exitCode = await exportModelsCommand(runId, flags)
    })
}

/** `trainpool calibrate` */
function addCalibrate(program: Command): void {
  program
    .command('calibrate')
    .description('time a small fixed workload on every backend auto may pick here (seconds each) and keep it in the store: auto is then the fastest')
    .option('--family <kind>', `model family: ${familyKinds().join(' | ')} (default: every family)`)
    .option('--store <dir>', 'run history folder, where the calibration is kept (default ~/.trainpool/runs)')
    .option('--json <file>', "write each family's calibration as JSON (what was measured, what auto picks and why); - for standard output")
    .action(async (flags) => {
      process.exitCode = await calibrateCommand(flags, version)
    })
}

export async function main(argv = process.argv): Promise<void> {
  const program = buildProgram()
  try {
    await program.parseAsync(argv)
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and --version exit 0; unknown flags, missing values: bad input
      process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage
      return
    }
    process.stderr.write(`trainpool: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
    process.exitCode = EXIT.failed
  }
}

void main()
