// A token per remote worker: HMAC-SHA256 of the run's secret and (worker index, submission). One Slurm
// submission covers every array task, so the tasks share the secret in their environment (never on
// a command line that `ps` or `squeue` shows) and each derives its own token from its index; the
// coordinator accepts each token once, so a replayed or guessed one is refused.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/** The run's secret as the environment carries it (64 hex digits). */
export function newRunSecret(): string {
  return randomBytes(32).toString('hex')
}

export function workerToken(secretHex: string, worker: number, submission: number): string {
  if (!/^[0-9a-f]{64}$/.test(secretHex)) throw new Error('TRAINPOOL_RUN_SECRET is not valid: 64 hex digits, as the coordinator gave it')
  return createHmac('sha256', Buffer.from(secretHex, 'hex')).update(`trainpool-worker:${worker}:${submission}`).digest('hex')
}

/** Constant-time comparison of two hex tokens. */
export function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex')
  const y = Buffer.from(b, 'hex')
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y)
}
