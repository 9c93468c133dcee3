// Where the app's own pages live, and the one test of "is this URL ours?" that IPC sender checks,
// the CSP hook and navigation guards share. Production: file:// pages inside out/renderer/.
// Development (electron-vite dev, unpackaged only): the Vite dev server's origin.
import { join, sep } from 'node:path'
import { pathToFileURL } from 'node:url'

export interface AppPage {
  readonly kind: 'file' | 'dev'
  /** the URL the window loads */
  readonly url: string
  /** index.html on disk (kind 'file') */
  readonly filePath: string | null
  /** http origin of the dev server (kind 'dev') */
  readonly devOrigin: string | null
  isAppUrl(url: string): boolean
}

export interface AppPageOptions {
  /** out/renderer */
  rendererDir: string
  /** ELECTRON_RENDERER_URL; honoured only when `allowDevServer` */
  devServerUrl?: string
  allowDevServer: boolean
  /** defaults to process.platform */
  platform?: NodeJS.Platform
}

function parse(url: string): URL | null {
  try {
    return new URL(url)
  } catch {
    return null
  }
}

export function resolveAppPage(options: AppPageOptions): AppPage {
  const dev = options.allowDevServer && options.devServerUrl ? parse(options.devServerUrl) : null
  if (dev && (dev.protocol === 'http:' || dev.protocol === 'https:')) {
    const origin = dev.origin
    return {
      kind: 'dev',
      url: dev.href,
      filePath: null,
      devOrigin: origin,
      isAppUrl: (url) => parse(url)?.origin === origin,
    }
  }
  const win32 = (options.platform ?? process.platform) === 'win32'
  const filePath = join(options.rendererDir, 'index.html')
  // every page we ship sits in the renderer folder; nothing else on disk is ours
  const dirPath = new URL(pathToFileURL(options.rendererDir.endsWith(sep) ? options.rendererDir : options.rendererDir + sep).href).pathname
  return {
    kind: 'file',
    url: pathToFileURL(filePath).href,
    filePath,
    devOrigin: null,
    isAppUrl: (url) => {
      const u = parse(url)
      if (!u || u.protocol !== 'file:' || (u.host !== '' && u.host !== 'localhost')) return false
      // Windows paths are case-insensitive (drive letters especially)
      return win32 ? u.pathname.toLowerCase().startsWith(dirPath.toLowerCase()) : u.pathname.startsWith(dirPath)
    },
  }
}
