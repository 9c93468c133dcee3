// No import circles in the source folders: a circle makes load order matter (a module sees another's
// exports as undefined while both load) and blurs which of two modules is the lower layer. This walks
// the static imports (type-only ones too: they still tie the two modules together) of src-main,
// src-shared, src-preload and src-renderer, resolving relative paths and the @shared alias, and
// reports every strongly connected group of more than one file.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(__dirname, '../..')
const FOLDERS = ['src-main', 'src-shared', 'src-preload', 'src-renderer']

/**
 * Circles another change is removing right now (issue 22), each named by two of its files. Remove
 * an entry once its circle is gone: the test fails on an entry that matches no circle any more.
 */
const BEING_REMOVED: [string, string][] = []

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(path)
    return /\.(ts|vue)$/.test(name) && !/\.(test|spec)\.ts$/.test(name) && !name.endsWith('.d.ts') ? [path] : []
  })
}

// `import … from 'x'`, `import 'x'`, `export … from 'x'`; not import('x'): a lazy import is how code
// that must not load a module early reaches it
const IMPORT = /^\s*(?:import|export)\s(?:[^'";]*?\sfrom\s)?\s*['"]([^'"]+)['"]/gm

function resolveImport(from: string, spec: string): string | null {
  const base = spec.startsWith('@shared/')
    ? join(ROOT, 'src-shared', spec.slice('@shared/'.length))
    : spec.startsWith('.')
      ? resolve(dirname(from), spec)
      : null
  if (!base) return null
  const stem = base.replace(/\.js$/, '')
  for (const candidate of [base, `${stem}.ts`, `${stem}.vue`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate
  }
  return null
}

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of FOLDERS.flatMap((f) => sourceFiles(join(ROOT, f)))) {
    const text = readFileSync(file, 'utf8')
    const targets = [...text.matchAll(IMPORT)].map((m) => resolveImport(file, m[1])).filter((t): t is string => t !== null)
    graph.set(file, [...new Set(targets)])
  }
  return graph
}

/** Tarjan's strongly connected components with more than one file (each sorted): each holds at least one circle. */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  let next = 0
  const visit = (v: string) => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        group.push(w)
      } while (w !== v)
      if (group.length > 1) found.push(group.sort())
    }
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return found
}

describe('imports', () => {
  it('form no circles', () => {
    const found = circles(importGraph()).map((group) => group.map((f) => relative(ROOT, f)))
    const excused = (group: string[]) => BEING_REMOVED.some((files) => files.every((f) => group.includes(f)))
    expect(found.filter((group) => !excused(group)).map((group) => group.join(' ↔ '))).toEqual([])
    const stale = BEING_REMOVED.filter((files) => !found.some((group) => files.every((f) => group.includes(f))))
    expect(stale, 'these circles are gone: remove them from BEING_REMOVED').toEqual([])
  })

  it('the walk sees a circle where there is one', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
      ['e', []],
    ])
    expect(circles(graph)).toEqual([['a', 'b', 'c']])
  })
})
