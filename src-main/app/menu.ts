// Application menu. Run-related items are commands the renderer carries out (it owns the form and
// the views), sent on MENU_CHANNEL; Cancel goes straight to the service so it works even while the
// page is busy. Edit/View/Window are Electron's standard roles (copy/paste, zoom, full screen…).
import { Menu } from 'electron'
import type { MenuItemConstructorOptions } from 'electron'
import type { MenuCommand } from '@shared/contract/channels'

export interface MenuActions {
  command(command: MenuCommand): void
  cancel(): void
}

export function menuTemplate(actions: MenuActions, platform: NodeJS.Platform = process.platform): MenuItemConstructorOptions[] {
  const mac = platform === 'darwin'
  const send = (command: MenuCommand) => () => actions.command(command)
  const template: MenuItemConstructorOptions[] = []
  if (mac) template.push({ role: 'appMenu' })
  template.push(
    {
      label: '&File',
      submenu: [
        { id: 'new-run', label: 'New Run', accelerator: 'CmdOrCtrl+N', click: send('new-run') },
        { id: 'history', label: 'History', accelerator: 'CmdOrCtrl+Shift+H', click: send('history') },
        { type: 'separator' },
        { id: 'save-report', label: 'Save Report…', accelerator: 'CmdOrCtrl+S', click: send('save-report') },
        { type: 'separator' },
        mac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    {
      label: '&Run',
      submenu: [
        { id: 'run', label: 'Run', accelerator: 'CmdOrCtrl+Enter', click: send('run') },
        { id: 'cancel', label: 'Cancel', accelerator: 'CmdOrCtrl+.', click: () => actions.cancel() },
      ],
    },
    { role: 'editMenu' },
    { role: 'viewMenu' },
    { role: 'windowMenu' },
  )
  return template
}

export function installMenu(actions: MenuActions): Menu {
  const menu = Menu.buildFromTemplate(menuTemplate(actions))
  Menu.setApplicationMenu(menu)
  return menu
}
