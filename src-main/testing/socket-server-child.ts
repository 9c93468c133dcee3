// Child process for the socket memory tests: starts browser mode's server (`serve`, over the one
// FakeService) or the worker gateway (`worker-gateway`) on loopback, prints {"port", "token"} once
// listening, then answers each line on stdin with {"rssBytes", "maxRssBytes"} (resourceUsage's maxRSS
// is in KiB), so a test can bound what strangers cost the server alone.
import { createInterface } from 'node:readline'
import { FakeService } from '@shared/testing/fake-service'
import { WorkerGateway } from '../pool/remote/gateway'
import { newRunSecret } from '../pool/remote/token'
import { startServer } from '../server/server'
import { fakeRendererDir } from './http'

async function listen(kind: string): Promise<{ port: number; token: string }> {
  if (kind === 'serve') {
    const server = await startServer({ service: new FakeService({ capabilities: { shell: 'browser' } }), port: 0, rendererDir: fakeRendererDir().dir })
    return { port: server.port, token: server.token }
  }
  if (kind === 'worker-gateway') {
    const gateway = await WorkerGateway.listen({ host: '127.0.0.1', port: 0 }, newRunSecret(), (line) => process.stderr.write(`${line}\n`))
    return { port: Number(new URL(gateway.url).port), token: '' }
  }
  throw new Error(`socket-server-child: kind ${JSON.stringify(kind)} is not valid: serve or worker-gateway`)
}

listen(process.argv[2])
  .then((address) => {
    process.stdout.write(`${JSON.stringify(address)}\n`)
    createInterface({ input: process.stdin }).on('line', () => {
      process.stdout.write(`${JSON.stringify({ rssBytes: process.memoryUsage().rss, maxRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`)
    })
    // the test ends it by closing stdin
    process.stdin.on('end', () => process.exit(0))
  })
  .catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  })
