// Channel names (IPC) and WebSocket method names: one per API method. Kept free of imports so the
// sandboxed preload can bundle it without pulling in the schema library.
export const CHANNELS = {
  capabilities: 'trainpool:capabilities',
  start: 'trainpool:start',
  cancel: 'trainpool:cancel',
  listRuns: 'trainpool:list-runs',
  getRun: 'trainpool:get-run',
  currentRun: 'trainpool:current-run',
  event: 'trainpool:event',
} as const

export type Method = Exclude<keyof typeof CHANNELS, 'event'>
