// Browser mode's locks: a random token (as Jupyter does) in the URL or a cookie set on the first
// authorized load, Host/Origin checks (foreign origins and DNS-rebinding hosts are refused), and the
// security headers every response carries.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { isIP } from 'node:net'
import { offlineContentSecurityPolicy } from '@shared/contract/csp'

export const TOKEN_QUERY = 'token'

export function newToken(): string {
  return randomBytes(24).toString('hex')
}

/** Cookies are not port-scoped: one name per port, so two servers on one host do not clobber each other. */
export function cookieName(port: number): string {
  return `trainpool-token-${port}`
}

export function tokenCookie(token: string, port: number): string {
  return `${cookieName(port)}=${token}; Path=/; HttpOnly; SameSite=Strict`
}

/** Constant-time comparison (hashing first makes the lengths equal). */
export function tokenMatches(given: string | null | undefined, token: string): boolean {
  if (typeof given !== 'string' || !given) return false
  const a = createHash('sha256').update(given).digest()
  const b = createHash('sha256').update(token).digest()
  return timingSafeEqual(a, b)
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>()
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq <= 0) continue
    const name = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (name && !out.has(name)) out.set(name, value)
  }
  return out
}

export type TokenSource = 'query' | 'cookie' | 'bearer' | null

/** The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1: the scheme is case-insensitive), or null. */
function bearerToken(header: string | undefined): string | null {
  const m = /^bearer[ ]+(\S+)\s*$/i.exec(header ?? '')
  return m ? m[1] : null
}

/** Where the request proved it knows the token, or null when it did not. */
export function tokenSource(req: IncomingMessage, url: URL, token: string, port: number): TokenSource {
  if (tokenMatches(url.searchParams.get(TOKEN_QUERY), token)) return 'query'
  if (tokenMatches(parseCookies(req.headers.cookie).get(cookieName(port)), token)) return 'cookie'
  // what the 401's `WWW-Authenticate: Bearer` asks a script for
  if (tokenMatches(bearerToken(req.headers.authorization), token)) return 'bearer'
  return null
}

/**
 * A host as an address, not as text: WHATWG URL parsing (Node's own) turns every IPv4 spelling into
 * its dotted quad (`127.1`, `2130706433`, `0x7f.1` → 127.0.0.1; `0` → 0.0.0.0) and compresses IPv6
 * (returned in brackets); a name comes back lower-cased. Unparseable text comes back as it was.
 */
export function canonicalHost(host: string): string {
  const h = host.trim().toLowerCase()
  const bare = h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h
  try {
    return new URL(`http://${isIP(bare) === 6 ? `[${bare}]` : bare}/`).hostname
  } catch {
    return h
  }
}

export function isLoopbackHost(host: string): boolean {
  const c = canonicalHost(host)
  return c === 'localhost' || c.endsWith('.localhost') || c === '[::1]' || (isIP(c) === 4 && c.startsWith('127.'))
}

/** Bound to every interface: 0.0.0.0 or :: in any spelling (`0`, `0.0.0.0`, `[::]`, `0:0::0`). */
export function isWildcardHost(host: string): boolean {
  const c = canonicalHost(host)
  return c === '0.0.0.0' || c === '[::]'
}

/** The address to listen on: the canonical form, IPv6 without brackets (what listen() takes). */
export function listenHost(host: string): string {
  const c = canonicalHost(host)
  return c.startsWith('[') ? c.slice(1, -1) : c
}

/** Host name without the port ("[::1]:7878" → "[::1]", "a:1" → "a"). */
export function hostName(hostHeader: string): string {
  if (hostHeader.startsWith('[')) {
    const end = hostHeader.indexOf(']')
    return end > 0 ? hostHeader.slice(0, end + 1) : hostHeader
  }
  const colon = hostHeader.lastIndexOf(':')
  return colon > 0 ? hostHeader.slice(0, colon) : hostHeader
}

/** host for a URL: IPv6 literals get brackets. */
export function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host
}

/**
 * The Host header must name this server: when bound to loopback only loopback names are accepted
 * (a DNS-rebinding page reaches us under its own name); when bound to all interfaces any name is,
 * and the token is the lock.
 */
export function hostAllowed(hostHeader: string | undefined, boundHost: string, port: number): boolean {
  if (!hostHeader || !/^[A-Za-z0-9.\-[\]:]+$/.test(hostHeader)) return false
  const name = hostName(hostHeader)
  const portPart = hostHeader.slice(name.length)
  if (portPart !== '' && portPart !== `:${port}`) return false
  if (isLoopbackHost(boundHost)) return isLoopbackHost(name)
  return true
}

/** Why a request (HTTP or a WebSocket upgrade) is foreign to this server — its Host or its Origin — or null when it is not. */
export function foreignRequest(req: IncomingMessage, boundHost: string, port: number): 'Host' | 'Origin' | null {
  const hostHeader = req.headers.host
  if (!hostAllowed(hostHeader, boundHost, port)) return 'Host'
  const origin = req.headers.origin
  if (!originAllowed(Array.isArray(origin) ? origin[0] : origin, hostHeader)) return 'Origin'
  return null
}

/** Requests without an Origin (curl, a raw WebSocket client) pass; a browser's Origin must be this server. */
export function originAllowed(origin: string | undefined, hostHeader: string | undefined): boolean {
  if (origin === undefined) return true
  if (!hostHeader) return false
  let u: URL
  try {
    u = new URL(origin)
  } catch {
    return false
  }
  return u.protocol === 'http:' && u.host.toLowerCase() === hostHeader.toLowerCase()
}

/** CSP for the app's page: nothing from outside this server (offline by design). */
export function contentSecurityPolicy(hostHeader: string): string {
  return offlineContentSecurityPolicy([`ws://${hostHeader}`])
}

/** Headers on every response. */
export const BASE_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
}
