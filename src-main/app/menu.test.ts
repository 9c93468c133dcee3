import { describe, expect, it, vi } from 'vitest'
import type { MenuItemConstructorOptions } from 'electron'

vi.mock('electron', () => import('../testing/fake-electron'))
const { menuTemplate, installMenu } = await import('./menu')
const { Menu } = await import('../testing/fake-electron')

function items(template: MenuItemConstructorOptions[]): MenuItemConstructorOptions[] {
  return template.flatMap((m) => [m, ...(Array.isArray(m.submenu) ? items(m.submenu) : [])])
}
const byId = (t: MenuItemConstructorOptions[], id: string) => items(t).find((i) => i.id === id)!

describe('application menu', () => {
  it('has New run, Run, Cancel, Save report…, History with their accelerators, and standard roles', () => {
    const t = menuTemplate({ command: () => {}, cancel: () => {} }, 'linux')
    expect(byId(t, 'new-run').accelerator).toBe('CmdOrCtrl+N')
    expect(byId(t, 'run').accelerator).toBe('CmdOrCtrl+Enter')
    expect(byId(t, 'cancel').accelerator).toBe('CmdOrCtrl+.')
    expect(byId(t, 'save-report').label).toBe('Save Report…')
    expect(byId(t, 'history')).toBeDefined()
    const roles = items(t)
      .map((i) => i.role)
      .filter(Boolean)
    expect(roles).toEqual(expect.arrayContaining(['editMenu', 'viewMenu', 'windowMenu', 'quit']))
    expect(roles).not.toContain('appMenu')
    expect(items(menuTemplate({ command: () => {}, cancel: () => {} }, 'darwin')).map((i) => i.role)).toContain('appMenu')
  })

  it('sends renderer commands, and cancels through the service action', () => {
    const command = vi.fn()
    const cancel = vi.fn()
    const t = menuTemplate({ command, cancel }, 'linux')
    for (const id of ['new-run', 'run', 'save-report', 'history']) (byId(t, id).click as () => void)()
    expect(command.mock.calls.map((c) => c[0])).toEqual(['new-run', 'run', 'save-report', 'history'])
    ;(byId(t, 'cancel').click as () => void)()
    expect(cancel).toHaveBeenCalledOnce()
    expect(command).toHaveBeenCalledTimes(4)
  })

  it('installs itself as the application menu', () => {
    installMenu({ command: () => {}, cancel: () => {} })
    expect(Menu.current?.template.length).toBeGreaterThan(3)
  })
})
