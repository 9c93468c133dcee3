/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS preload for `node -r` */
// Preloaded with `node -r` to run the BUILT main bundle (out/main/index.js) without the Electron
// binary: `require('electron')` gets a minimal stand-in, and utilityProcess.fork is emulated with
// child_process.fork (the worker entry falls back to process.send). The test drives the real
// ipcMain handlers through globalThis.__trainpoolShim and reads the lines printed here.
const Module = require('node:module')
const { EventEmitter } = require('node:events')
const { fork } = require('node:child_process')

const out = (kind, data) => process.stdout.write(`SHIM ${JSON.stringify({ kind, data })}\n`)

class WebContents extends EventEmitter {
  constructor() {
    super()
    this.id = 1
  }
  send(channel, value) {
    out('send', { channel, type: value && value.type })
  }
  setWindowOpenHandler(h) {
    out('window-open', h({ url: 'https://example.com/' }))
  }
  isDestroyed() {
    return false
  }
}
class BrowserWindow extends EventEmitter {
  constructor(options) {
    super()
    this.webContents = new WebContents()
    out('window', options.webPreferences)
  }
  loadFile(f) {
    out('load', f)
    return Promise.resolve()
  }
  loadURL(u) {
    out('load', u)
    return Promise.resolve()
  }
  isDestroyed() {
    return false
  }
  isMinimized() {
    return false
  }
  isMaximized() {
    return false
  }
  maximize() {}
  show() {}
  focus() {}
  setBackgroundColor() {}
  getNormalBounds() {
    return { x: 0, y: 0, width: 1000, height: 700 }
  }
}

const app = Object.assign(new EventEmitter(), {
  isPackaged: false,
  enableSandbox: () => out('sandbox', true),
  requestSingleInstanceLock: () => true,
  whenReady: () => Promise.resolve(),
  getPath: () => process.env.TRAINPOOL_SHIM_USERDATA,
  getVersion: () => '0.0.0-shim',
  quit: () => {
    out('quit', true)
    setTimeout(() => process.exit(0), 10)
  },
  exit: (code) => process.exit(code),
})

const handlers = new Map()
const electron = {
  app,
  BrowserWindow,
  ipcMain: { handle: (c, h) => handlers.set(c, h), removeHandler: (c) => handlers.delete(c) },
  session: {
    defaultSession: {
      webRequest: { onHeadersReceived: () => out('csp', true) },
      setPermissionRequestHandler() {},
      setPermissionCheckHandler() {},
    },
  },
  nativeTheme: Object.assign(new EventEmitter(), { shouldUseDarkColors: false, themeSource: 'light' }),
  screen: { getAllDisplays: () => [{ workArea: { x: 0, y: 0, width: 1920, height: 1080 } }] },
  Menu: { buildFromTemplate: (t) => t, setApplicationMenu: (m) => out('menu', m.length) },
  utilityProcess: {
    fork(modulePath, args, options) {
      out('fork', { modulePath, serviceName: options.serviceName, stdio: options.stdio })
      const child = fork(modulePath, args, { env: options.env, execArgv: [], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
      const em = new EventEmitter()
      child.on('message', (m) => em.emit('message', m))
      child.on('exit', (code) => em.emit('exit', code ?? 0)) // Electron: signal kills read as 0
      return Object.assign(em, {
        get pid() {
          return child.exitCode === null ? child.pid : undefined
        },
        stdout: child.stdout,
        stderr: child.stderr,
        postMessage: (m) => child.send(m),
        kill: () => child.kill('SIGTERM'),
      })
    },
  },
}

const load = Module._load
Module._load = function (request, ...rest) {
  return request === 'electron' ? electron : load.call(this, request, ...rest)
}

globalThis.__trainpoolShim = { handlers, app }
