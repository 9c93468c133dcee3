// Browser mode's upload of a data file: the file's bytes POSTed to the server that served this page
// (same origin, so the CSP's connect-src 'self' covers it and the token cookie goes along), with
// upload progress from XMLHttpRequest (fetch has no upload progress). The answer is validated
// against the contract's DataSetInfoSchema before anyone uses it.
import { type DataSetInfo, DataSetInfoSchema } from '@shared/contract/dataset'
import { UPLOAD_NAME_QUERY, UPLOAD_PATH, uploadNameProblem } from '@shared/contract/upload'

export interface UploadProgress {
  loaded: number
  total: number
}

export interface Upload {
  /** the loaded data set, or a rejection with a message saying what went wrong */
  done: Promise<DataSetInfo>
  /** stops the upload (the server removes what arrived); `done` rejects with an aborted message */
  abort(): void
}

/** Where to POST: this page's origin, the file name, and the page's ?token= when it has one. */
export function uploadUrl(name: string, loc: Pick<Location, 'search'> = globalThis.location): string {
  const params = new URLSearchParams({ [UPLOAD_NAME_QUERY]: name })
  // as the WebSocket bridge does (bridgeForLocation); the server's cookie also works without it
  const token = new URLSearchParams(loc.search).get('token')
  if (token) params.set('token', token)
  return `${UPLOAD_PATH}?${params.toString()}`
}

/** What the server said went wrong, in words. */
function failure(xhr: XMLHttpRequest): string {
  try {
    const body = JSON.parse(xhr.responseText) as { error?: { message?: unknown } }
    if (typeof body.error?.message === 'string') return body.error.message
  } catch {
    /* not JSON: the status line says it */
  }
  const text = xhr.responseText.trim()
  return text || `the server answered ${xhr.status}`
}

export function uploadDataFile(
  file: Pick<File, 'name' | 'size'> & Blob,
  onProgress: (p: UploadProgress) => void,
  XHR: typeof XMLHttpRequest = XMLHttpRequest,
): Upload {
  const xhr = new XHR()
  const done = new Promise<DataSetInfo>((resolve, reject) => {
    const problem = uploadNameProblem(file.name)
    if (problem) return reject(new Error(problem))
    xhr.open('POST', uploadUrl(file.name))
    xhr.setRequestHeader('Content-Type', 'application/octet-stream')
    xhr.upload.onprogress = (e) => onProgress({ loaded: e.loaded, total: e.lengthComputable ? e.total : file.size })
    xhr.onerror = () => reject(new Error('the upload failed: the connection to the server broke'))
    xhr.onabort = () => reject(new Error('upload cancelled'))
    xhr.onload = () => {
      if (xhr.status !== 200)
        return reject(new Error(xhr.status === 401 ? 'not authorized: reopen the URL trainpool serve printed (with ?token=)' : failure(xhr)))
      let parsed: unknown
      try {
        parsed = JSON.parse(xhr.responseText)
      } catch {
        return reject(new Error('the server answered something that is not JSON'))
      }
      const info = DataSetInfoSchema.safeParse(parsed)
      if (!info.success) return reject(new Error(`the server's answer is not a data set: ${info.error.issues[0]?.message ?? 'bad shape'}`))
      resolve(info.data)
    }
    onProgress({ loaded: 0, total: file.size })
    xhr.send(file)
  })
  return { done, abort: () => xhr.abort() }
}
