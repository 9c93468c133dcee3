// Channel names (IPC) and WebSocket method names: one per API method. Kept free of imports so the
// sandboxed preload can bundle it without pulling in the schema library.
export const CHANNELS = {
  capabilities: 'trainpool:capabilities',
  start: 'trainpool:start',
  cancel: 'trainpool:cancel',
  listRuns: 'trainpool:list-runs',
  getRun: 'trainpool:get-run',
  currentRun: 'trainpool:current-run',
  renameRun: 'trainpool:rename-run',
  tagRun: 'trainpool:tag-run',
  deleteRun: 'trainpool:delete-run',
  exportRun: 'trainpool:export-run',
  reportPdf: 'trainpool:report-pdf',
  event: 'trainpool:event',
} as const

export type Method = Exclude<keyof typeof CHANNELS, 'event'>

/**
 * Main → renderer only (Electron): commands from the application menu that the renderer acts on
 * (Cancel is handled in main, it calls the service directly). Not an API method, so not in CHANNELS.
 */
export const MENU_CHANNEL = 'trainpool:menu'
export const MENU_COMMANDS = ['new-run', 'run', 'save-report', 'history'] as const
export type MenuCommand = (typeof MENU_COMMANDS)[number]
