// `trainpool worker --connect URL`: one training worker for a coordinator elsewhere (what each
// Slurm task runs). The worker bundle (out/main/worker.js) runs in this process over the worker
// socket instead of IPC: who it is and its token come from the environment (socket-transport.ts).
import { pathToFileURL } from 'node:url'
import { resolveWorkerEntry } from '../pool/node-launcher'
import { EXIT } from './bench-command'

export async function workerCommand(url: string): Promise<number> {
  if (!/^wss?:\/\/[^\s/]+(\/\S*)?$/.test(url)) {
    process.stderr.write(`trainpool worker: --connect ${JSON.stringify(url)} is not valid: the ws://HOST:PORT/worker address the coordinator gave\n`)
    return EXIT.usage
  }
  // the CLI and the worker are entries of one build: out/main/cli.js beside out/main/worker.js
  const entry = resolveWorkerEntry()
  if (entry.execArgv.length > 0) {
    process.stderr.write(`trainpool worker: the worker bundle is not built next to ${__dirname}: run \`npm run build\`\n`)
    return EXIT.failed
  }
  process.env.TRAINPOOL_CONNECT = url
  await import(pathToFileURL(entry.path).href)
  // the worker's loop keeps the process alive; it exits when the coordinator says so or goes away
  return EXIT.ok
}
