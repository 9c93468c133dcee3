// Facts about this machine and this build that every backend records with its results: the CPU
// model and the version of an npm package (read from its package.json, never from its code).
import { createRequire } from 'node:module'
import os from 'node:os'

const require = createRequire(__filename)

export function cpuModel(): string {
  const cpus = os.cpus()
  return `${cpus[0]?.model?.trim() || os.arch()} (${cpus.length} cores)`
}

export function packageVersion(pkg: string): string {
  try {
    return (require(`${pkg}/package.json`) as { version: string }).version
  } catch {
    return 'unknown'
  }
}
