// How long each list in a models.json (and in an xgboost booster's JSON) may be, checked on the raw
// bytes as they stream past, before anything is parsed: a 287 MB file holding one list of 150 M
// numbers (under the file cap) killed export-models and `serve` in JSON.parse, and a 1e7-node tree
// took 8 s and 1.1 GB to be refused. Every bound is the largest list a run can produce
// (ARTIFACT_LIMITS, derived from the families' limits; LIMITS.models.max), so a sound file always
// passes and an oversized list is refused at its first entry past the bound, naming its field. The
// same pass can note where each entry of the top-level `models` list lies (`entriesOf`), so a reader
// parses one model at a time from its own bytes instead of the whole file.
import { gbdtFamily } from '../families/gbdt'
import { LIMITS } from './config'
import { CLASS_LIMITS } from '../vocabulary/task'

/** The trees family's deepest tree (--max-depth's maximum): a tree deeper than any run grows is refused, whatever its node count. */
const MAX_TREE_DEPTH = gbdtFamily.fields.find((f) => f.key === 'maxDepth')!.range.max
/** The trees family's most rounds: a model grows one tree a round, K a round as a K-class classifier */
const MAX_ROUNDS = gbdtFamily.fields.find((f) => f.key === 'rounds')!.range.max

/** The largest artifact accepted: above every family's limits (gbdt rounds ≤ 10 000 × K ≤ 32 classes, depth ≤ 16; MLP hidden ≤ 4 layers of 4096). */
export const ARTIFACT_LIMITS = {
  features: 65_536,
  trees: MAX_ROUNDS * CLASS_LIMITS.max,
  /** levels below the root */
  treeDepth: MAX_TREE_DEPTH,
  /** a full tree of that depth */
  treeNodes: 2 ** (MAX_TREE_DEPTH + 1) - 1,
  layers: 16,
  units: 65_536,
  layerWeights: 2 ** 26,
} as const

interface ListBound {
  max: number
  /** what the bound is, in words: "a tree of depth 16 has at most 131071 nodes" */
  why: string
}

const treeNodes: ListBound = {
  max: ARTIFACT_LIMITS.treeNodes,
  why: `a tree of depth ${ARTIFACT_LIMITS.treeDepth} has at most ${ARTIFACT_LIMITS.treeNodes} nodes`,
}
const trees: ListBound = {
  max: ARTIFACT_LIMITS.trees,
  why: `a model has at most ${ARTIFACT_LIMITS.trees} trees (${MAX_ROUNDS} rounds × ${CLASS_LIMITS.max} classes)`,
}
/** a list under a name neither table knows (XGBoost's "version", "feature_names"): no longer than a layer is wide */
const OTHER_LIST: ListBound = { max: ARTIFACT_LIMITS.units, why: `a list of this kind has at most ${ARTIFACT_LIMITS.units} entries` }
/** nesting deeper than either format's own (about 8 levels) */
const MAX_NESTING = 32

export type ListBounds = Readonly<Record<string, ListBound>>

/** a run's kept models (KeptModelsSchema), by field name */
export const KEPT_MODELS_LIST_BOUNDS: ListBounds = {
  models: { max: LIMITS.models.max, why: `a run keeps at most ${LIMITS.models.max} models` },
  trees,
  ...Object.fromEntries(['feature', 'threshold', 'defaultLeft', 'left', 'leafValue'].map((key) => [key, treeNodes])),
  layers: { max: ARTIFACT_LIMITS.layers, why: `an MLP has at most ${ARTIFACT_LIMITS.layers} layers` },
  w: { max: ARTIFACT_LIMITS.layerWeights, why: `a layer has at most ${ARTIFACT_LIMITS.layerWeights} weights` },
  b: { max: ARTIFACT_LIMITS.units, why: `a layer has at most ${ARTIFACT_LIMITS.units} outputs` },
  mean: { max: ARTIFACT_LIMITS.features, why: `a model has at most ${ARTIFACT_LIMITS.features} features` },
  std: { max: ARTIFACT_LIMITS.features, why: `a model has at most ${ARTIFACT_LIMITS.features} features` },
}

/** an xgboost backend's booster as XGBoost 1.7 saves it, by field name */
export const BOOSTER_LIST_BOUNDS: ListBounds = {
  trees,
  tree_info: trees,
  ...Object.fromEntries(
    [
      'left_children',
      'right_children',
      'parents',
      'split_indices',
      'default_left',
      'split_type',
      'split_conditions',
      'base_weights',
      'loss_changes',
      'sum_hessian',
    ].map((key) => [key, treeNodes]),
  ),
}

interface Frame {
  list: boolean
  /** a list: its field name (null inside a list); an object: the key whose value is being read */
  key: string | null
  bound: ListBound
  /** a list's entries so far */
  count: number
  /** a list: an entry has begun since its last comma */
  inEntry: boolean
  /** the list whose entries' places are noted (ListBoundsScan's `entriesOf`) */
  noted: boolean
}

/** Where something lies in the text fed: offsets in what was fed (bytes, for bytes), `end` past its last. */
export interface TextRange {
  start: number
  end: number
}

/** The noted list: where it lies (its brackets included) and where each of its entries that is an object or a list lies. */
export interface NotedList extends TextRange {
  entries: TextRange[]
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
/** a key longer than any field name is kept only in part (it names no bounded list) */
const KEY_CHARS = 64

/**
 * Reads JSON text chunk by chunk and keeps only its nesting, so memory stays a few hundred bytes
 * whatever the text; `problem` names the first list past its bound ("models.0.artifact.trees.0.left
 * has more than 131071 entries: …"). With `entriesOf`, the list under that key of the top-level
 * object is `noted` (the last such list, as JSON.parse keeps the last of a repeated key): where it
 * lies and where each of its object or list entries lies, 16 bytes an entry. The text's syntax is
 * not checked here: JSON.parse does that after, on each piece.
 */
export class ListBoundsScan {
  problem: string | null = null
  /** the `entriesOf` list, once its opening bracket has been read (end -1 until it closes) */
  noted: NotedList | null = null
  private readonly stack: Frame[] = []
  private inString = false
  private escaped = false
  private text = ''
  private lastString = ''
  /** the offset of the unit being read */
  private at = 0

  constructor(
    private readonly bounds: ListBounds,
    private readonly entriesOf?: string,
  ) {}

  /** Takes the next chunk (bytes or text); returns the problem once one is found. */
  feed(chunk: Uint8Array | string): string | null {
    if (this.problem) return this.problem
    const bytes = typeof chunk !== 'string'
    for (let i = 0; i < chunk.length && !this.problem; i++, this.at++) this.step(bytes ? (chunk as Uint8Array)[i] : (chunk as string).charCodeAt(i))
    return this.problem
  }

  private step(c: number): void {
    if (this.inString) {
      if (this.escaped) this.escaped = false
      else if (c === BACKSLASH) this.escaped = true
      else if (c === QUOTE) {
        this.inString = false
        this.lastString = this.text
      } else if (this.text.length < KEY_CHARS) this.text += String.fromCharCode(c)
      return
    }
    // whitespace
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) return
    const top = this.stack.at(-1)
    if (c === 0x2c /* , */) {
      if (top?.list) top.inEntry = false
      else if (top) top.key = null
      return
    }
    if (c === 0x3a /* : */) {
      if (top && !top.list) top.key = this.lastString
      return
    }
    if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      const closed = this.stack.pop()
      if (closed?.noted && this.noted) this.noted.end = this.at + 1
      else if (this.stack.at(-1)?.noted && this.noted) this.noted.entries.at(-1)!.end = this.at + 1
      return
    }
    // anything else begins or continues a value: the first byte of one in a list counts an entry
    if (top?.list && !top.inEntry) {
      top.inEntry = true
      if (++top.count > top.bound.max) {
        this.problem = `${this.path(this.stack.length - 1)} has more than ${top.bound.max} entries: ${top.bound.why}`
        return
      }
    }
    if (c === QUOTE) {
      this.inString = true
      this.text = ''
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (this.stack.length >= MAX_NESTING) {
        this.problem = `${this.path(this.stack.length) || 'the file'} is nested more than ${MAX_NESTING} levels deep: neither format nests that deep`
        return
      }
      const key = top && !top.list ? top.key : null
      const bound = (key !== null && Object.hasOwn(this.bounds, key) ? this.bounds[key] : undefined) ?? OTHER_LIST
      const noted = c === 0x5b && this.stack.length === 1 && key !== null && key === this.entriesOf
      if (noted) this.noted = { start: this.at, end: -1, entries: [] }
      else if (top?.noted) this.noted!.entries.push({ start: this.at, end: -1 })
      this.stack.push({ list: c === 0x5b, key, bound, count: 0, inEntry: false, noted })
    }
  }

  /** the field of stack[depth] in zod's words: models.0.artifact.trees.0.left */
  private path(depth: number): string {
    const parts: string[] = []
    for (let i = 0; i < depth; i++) {
      const frame = this.stack[i]
      if (frame.list) parts.push(String(frame.count - 1))
      else if (frame.key !== null) parts.push(frame.key)
    }
    return parts.join('.')
  }
}

/** The problem ListBoundsScan finds in a whole text (a booster's JSON, already in memory), or null. */
export function listBoundsProblem(text: string, bounds: ListBounds): string | null {
  return new ListBoundsScan(bounds).feed(text)
}
