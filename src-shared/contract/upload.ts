// Browser mode's data-file upload: the one HTTP endpoint besides the page and the WebSocket (the
// renderer POSTs the file's bytes there; the server streams them to the store and loads them). Its
// path, query and limits live here so the server, the renderer and the tests name them once.

/** POST the file's bytes as the body; `?name=` its file name; answers the DataSetInfo as JSON */
export const UPLOAD_PATH = '/api/upload'
export const UPLOAD_NAME_QUERY = 'name'

/** the cap when `trainpool serve --max-upload` does not set one: 2 GiB */
export const DEFAULT_MAX_UPLOAD_BYTES = 2 * 2 ** 30

/**
 * An upload may take as long as it needs while bytes keep arriving; it fails only after this long
 * without any (seconds; `trainpool serve --upload-idle-timeout`). Node's default of 5 minutes for the
 * whole request cut off anything slower than ~7 MB/s at the 2 GiB cap (an SSH tunnel).
 */
export const DEFAULT_UPLOAD_IDLE_SECONDS = 60

/** the file types Trainpool reads (TSV is CSV with tabs) */
export const DATA_FILE_EXTENSIONS = ['csv', 'tsv', 'parquet'] as const

/** bytes (UTF-8) of an uploaded file's name: what file systems allow for one name (NAME_MAX) */
export const UPLOAD_NAME_MAX = 255

/**
 * Why a file name is refused for upload, or null when it is fine: a base name (no folders), at most
 * UPLOAD_NAME_MAX bytes in UTF-8 (a file system's limit is in bytes: 200 "é" are 400), no control
 * characters, ending in .csv, .tsv or .parquet.
 */
export function uploadNameProblem(name: string): string | null {
  if (name.length === 0) return 'name: the file name is missing (?name=data.csv)'
  const bytes = new TextEncoder().encode(name).length
  if (bytes > UPLOAD_NAME_MAX) return `name: at most ${UPLOAD_NAME_MAX} bytes in UTF-8 (got ${bytes} bytes, ${name.length} characters)`
  if (/[\u0000-\u001f\u007f/\\]/.test(name) || name === '.' || name === '..')
    return `name: ${JSON.stringify(name)} is not a plain file name (no folders, no control characters)`
  const ext = /\.([^.]+)$/.exec(name)?.[1]?.toLowerCase()
  if (!ext || !(DATA_FILE_EXTENSIONS as readonly string[]).includes(ext)) {
    return `name: ${JSON.stringify(name)} is not a data file; accepted: ${DATA_FILE_EXTENSIONS.map((e) => `.${e}`).join(', ')}`
  }
  return null
}
