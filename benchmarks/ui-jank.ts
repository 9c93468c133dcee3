// UI jank benchmark launcher: `npx tsx benchmarks/ui-jank.ts`. The workload mounts Vue SFCs, so it
// runs under Vitest (Vite's Vue transform + happy-dom) with its own config, outside `npm test`.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const r = spawnSync('npx', ['vitest', 'run', '--config', 'benchmarks/ui-jank.config.mts', '--reporter=verbose'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, VITE_CONFIG_NATIVE_IGNORE_WARNING: 'true' },
})
process.exit(r.status ?? 1)
