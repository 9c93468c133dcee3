// Checks the electron-vite output when there is one (`npm test` builds before running vitest).
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import vm from 'node:vm'
import { describe, expect, it } from 'vitest'
import { CHANNELS, METHODS } from '@shared/contract/api'
import { BUILD_OUT, skipWithoutBuild } from '../testing/capability'

const out = BUILD_OUT
const notBuilt = skipWithoutBuild()

/** What a sandboxed preload may require (Electron docs, tutorial/sandbox.md "Preload scripts"). */
const SANDBOX_REQUIRABLE = new Set(['electron', 'events', 'timers', 'url'])

export function requiredModules(source: string): string[] {
  return [...source.matchAll(/\brequire\(\s*(["'`])([^"'`]+)\1\s*\)/g)].map((m) => m[2])
}

describe.skipIf(notBuilt)('electron-vite build output', () => {
  it('has the main, worker, CLI, preload and renderer entries', () => {
    for (const f of ['main/index.js', 'main/worker.js', 'main/cli.js', 'preload/index.js', 'renderer/index.html']) {
      expect(existsSync(join(out, f)), `out/${f}`).toBe(true)
    }
  })

  it('the preload bundle requires nothing a sandboxed preload cannot load', () => {
    const source = readFileSync(join(out, 'preload', 'index.js'), 'utf8')
    const required = requiredModules(source)
    expect(required).toContain('electron')
    expect(required.filter((m) => !SANDBOX_REQUIRABLE.has(m.replace(/^node:/, '')))).toEqual([])
    expect(source).not.toMatch(/\bimport\s*\(|^\s*import\s/m) // CJS only: sandboxed preloads cannot use ESM
  })

  it('the preload bundle (API table and zod included) runs as a sandboxed preload and exposes one method per API entry', async () => {
    const source = readFileSync(join(out, 'preload', 'index.js'), 'utf8')
    const exposed = new Map<string, Record<string, (...args: unknown[]) => Promise<unknown>>>()
    const invoked: [string, unknown][] = []
    const electron = {
      contextBridge: { exposeInMainWorld: (key: string, value: never) => exposed.set(key, value) },
      ipcRenderer: {
        invoke: async (channel: string, payload: unknown) => {
          invoked.push([channel, payload])
          return { ok: true, value: null }
        },
        on: () => {},
        removeListener: () => {},
      },
    }
    const sandboxRequire = (id: string) => {
      if (id === 'electron') return electron
      if (SANDBOX_REQUIRABLE.has(id)) return {}
      throw new Error(`a sandboxed preload cannot require ${id}`)
    }
    // what Electron hands a sandboxed preload: a limited require and process, no Node built-ins
    const context = vm.createContext({ console })
    const wrapped = vm.runInContext(`(function (require, process, Buffer, global, setImmediate, clearImmediate, exports, module) {${source}\n})`, context, {
      filename: 'preload/index.js',
    }) as (...args: unknown[]) => void
    const module = { exports: {} }
    const sandboxProcess = { platform: process.platform, arch: process.arch, env: {}, versions: {}, type: 'renderer', sandboxed: true }
    wrapped(sandboxRequire, sandboxProcess, undefined, vm.runInContext('globalThis', context), setImmediate, clearImmediate, module.exports, module)

    const api = exposed.get('trainpool')!
    expect(Object.keys(api).sort()).toEqual([...METHODS, 'onEvent', 'onMenuCommand'].sort())
    await api.getRun({ runId: 'r1' })
    await api.capabilities()
    expect(invoked).toEqual([
      [CHANNELS.getRun, { runId: 'r1' }],
      [CHANNELS.capabilities, undefined],
    ])
    expect(CHANNELS.getRun).toBe('trainpool:get-run')
  })

  it('the main bundle loads the built worker and preload from out/', () => {
    const source = readFileSync(join(out, 'main', 'index.js'), 'utf8')
    expect(source).toContain('worker.js')
    expect(source).toMatch(/preload/)
    expect(requiredModules(source)).toContain('electron')
  })
})

describe('requiredModules', () => {
  it('finds require() calls with any quote style', () => {
    expect(requiredModules(`const a=require("electron");const b = require( 'events' );require(\`url\`)`)).toEqual(['electron', 'events', 'url'])
  })
})
