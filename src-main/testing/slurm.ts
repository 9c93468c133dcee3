// The `slurm` capability: a Slurm cluster this machine can submit to, with a node ready for work
// (the one-node cluster of scripts/slurm-cluster.sh, or a real one). Synchronous, so a test file
// can decide at collection time: `describe.skipIf(skipWithout('slurm', s.ok, s.why))`.
import { execFileSync } from 'node:child_process'

const HOW = 'start the test cluster as root: bash scripts/slurm-cluster.sh up (packages: bash .ci/system-deps.sh)'

function stderrOf(e: unknown, timeoutMs: number): string {
  const err = e as { code?: string; stderr?: Buffer | string; message?: string }
  if (err.code === 'ENOENT') return 'not found on PATH'
  const text = String(err.stderr ?? '')
    .trim()
    .replace(/\s*\n\s*/g, '; ')
  if (err.code === 'ETIMEDOUT') return `no answer within ${timeoutMs} ms${text ? ` (so far: ${text})` : ''}`
  return text || String(err.message ?? e)
}

/**
 * ok when sbatch is on PATH and configured, and sinfo shows a node idle or mixed within a few
 * seconds (and with `gpus`, one whose generic resources include at least that many GPUs).
 */
export function slurmAvailable(options: { gpus?: number; timeoutMs?: number } = {}): { ok: boolean; why: string } {
  const timeout = options.timeoutMs ?? 5000
  try {
    execFileSync('sbatch', ['--version'], { timeout, stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (e) {
    return { ok: false, why: `sbatch --version: ${stderrOf(e, timeout)} (${HOW})` }
  }
  let nodes: string
  try {
    nodes = execFileSync('sinfo', ['-h', '-N', '-o', '%N|%t|%G'], { timeout, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (e) {
    return { ok: false, why: `sinfo: ${stderrOf(e, timeout)} (${HOW})` }
  }
  const rows = nodes
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.split('|'))
  // %t: idle, mix, alloc, drain…, with a flag suffix (* not responding, ~ powered off, …).
  const ready = rows.filter(([, state]) => /^(idle|mix)$/.test(state ?? ''))
  if (ready.length === 0) {
    const seen = rows.map(([node, state]) => `${node} ${state}`).join(', ') || 'no nodes'
    return { ok: false, why: `sinfo shows no idle or mixed node (${seen}) (${HOW})` }
  }
  const gpus = options.gpus
  if (gpus !== undefined) {
    const gpuCount = (gres: string) => Math.max(0, ...[...gres.matchAll(/gpu(?::[^:(,]+)?:(\d+)/g)].map((m) => Number(m[1])))
    if (!ready.some(([, , gres]) => gpuCount(gres ?? '') >= gpus)) {
      return { ok: false, why: `no ready node has ${gpus} GPUs (gres: ${ready.map(([n, , g]) => `${n} ${g}`).join(', ')}) (${HOW})` }
    }
  }
  return { ok: true, why: `ready: ${ready.map(([node, state, gres]) => `${node} ${state} ${gres}`).join(', ')}` }
}
