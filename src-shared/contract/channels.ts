// Main → renderer channels that are not API methods. The API's own channels (one per method, plus
// `event` for RunEvents) are derived from the method table in api.ts (CHANNELS).

/**
 * Main → renderer only (Electron): commands from the application menu that the renderer acts on
 * (Cancel is handled in main, it calls the service directly). Not an API method, so not in CHANNELS.
 */
export const MENU_CHANNEL = 'trainpool:menu'
export const MENU_COMMANDS = ['new-run', 'run', 'save-report', 'history'] as const
export type MenuCommand = (typeof MENU_COMMANDS)[number]
