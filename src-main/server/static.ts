// The built renderer (out/renderer) as static files: content types, and no way out of its folder
// (encoded ../, backslashes, NUL, symlinks pointing elsewhere all end in 400/404).
import { existsSync, promises as fs } from 'node:fs'
import { extname, join, resolve, sep } from 'node:path'

export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
}

export function contentType(path: string): string {
  return CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream'
}

/**
 * Where the built renderer is: next to the bundle (out/main/cli.js → out/renderer, or
 * out/main/chunks/x.js → out/renderer), or, from sources (tests), src-main/server → out/renderer.
 */
export function resolveRendererDir(): string {
  const override = process.env.TRAINPOOL_RENDERER_DIR
  if (override) return resolve(override)
  const candidates = [join(__dirname, '..', 'renderer'), join(__dirname, '..', '..', 'renderer'), join(__dirname, '..', '..', 'out', 'renderer')]
  for (const c of candidates) if (existsSync(join(c, 'index.html'))) return resolve(c)
  throw new Error(`trainpool serve: the built renderer (index.html) was not found near ${__dirname}; run \`npm run build\` first`)
}

export type StaticLookup = { ok: true; file: string; size: number; contentType: string } | { ok: false; status: 400 | 404 }

/** Maps a URL path to a file inside root, or refuses it. */
export async function lookupStatic(root: string, urlPath: string): Promise<StaticLookup> {
  let decoded: string
  try {
    decoded = decodeURIComponent(urlPath)
  } catch {
    return { ok: false, status: 400 }
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return { ok: false, status: 400 }
  const segments = decoded.split('/').filter((s) => s !== '')
  if (segments.some((s) => s === '..' || s === '.')) return { ok: false, status: 400 }
  const rel = segments.length ? segments.join(sep) : 'index.html'
  const realRoot = await fs.realpath(root)
  const candidate = resolve(realRoot, rel)
  if (!candidate.startsWith(realRoot + sep)) return { ok: false, status: 400 }
  let real: string
  try {
    real = await fs.realpath(candidate)
  } catch {
    return { ok: false, status: 404 }
  }
  if (!real.startsWith(realRoot + sep)) return { ok: false, status: 404 }
  const stat = await fs.stat(real).catch(() => null)
  if (!stat?.isFile()) return { ok: false, status: 404 }
  return { ok: true, file: real, size: stat.size, contentType: contentType(real) }
}
