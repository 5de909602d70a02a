import { canonical } from './components.js'

/*
 * The convention's headers are on nearly every operation and response: each copy of one
 * becomes a `$ref` to `components.headers` (response headers) or `components.parameters`
 * (request headers), OpenAPI 3.1 §4.8.7, so the document states each once and a reader or
 * client generator sees one definition. A header object used once stays where it is.
 */

type Json = Record<string, unknown>

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options']

/** `x-request-id` → `XRequestId`. */
const componentName = (header: string): string =>
  header.split('-').map(w => w.charAt(0).toUpperCase() + w.slice(1)).join('')

/**
 * Names every object `visit` finds more than once after its header name (a second shape of
 * the same header gets a number: `ContentLanguage2`), by its canonical text.
 */
function nameRepeated (found: Array<[string, unknown]>): Map<string, string> {
  const counts = new Map<string, { header: string, n: number }>()
  for (const [header, value] of found) {
    const text = canonical(value)
    const c = counts.get(text)
    if (c === undefined) counts.set(text, { header, n: 1 })
    else c.n++
  }
  const names = new Map<string, string>()
  const taken = new Map<string, number>()
  for (const [text, { header, n }] of counts) {
    if (n < 2) continue
    const base = componentName(header)
    const k = (taken.get(base) ?? 0) + 1
    taken.set(base, k)
    names.set(text, k === 1 ? base : `${base}${k}`)
  }
  return names
}

function operations (paths: Json): Json[] {
  return Object.values(paths).flatMap(item => METHODS.map(m => (item as Json)[m] as Json | undefined).filter(op => op !== undefined))
}

/** The document with repeated header parameters and response headers as components; the input is not changed. */
export function shareHeaders (doc: Json): Json {
  const paths = structuredClone(doc.paths as Json)
  const ops = operations(paths)
  const responses = ops.flatMap(op => Object.values(op.responses as Record<string, Json>))
  const headerParams = (op: Json): Json[] => ((op.parameters ?? []) as Json[]).filter(p => p.in === 'header')

  const headerNames = nameRepeated(responses.flatMap(r => Object.entries((r.headers ?? {}) as Json)))
  const paramNames = nameRepeated(ops.flatMap(op => headerParams(op).map(p => [String(p.name), p] as [string, unknown])))
  const headers: Json = {}
  const parameters: Json = {}
  for (const r of responses) {
    for (const [key, value] of Object.entries((r.headers ?? {}) as Json)) {
      const name = headerNames.get(canonical(value))
      if (name === undefined) continue
      headers[name] = value
      ;(r.headers as Json)[key] = { $ref: `#/components/headers/${name}` }
    }
  }
  for (const op of ops) {
    if (op.parameters === undefined) continue
    op.parameters = (op.parameters as Json[]).map(p => {
      const name = p.in === 'header' ? paramNames.get(canonical(p)) : undefined
      if (name === undefined) return p
      parameters[name] = p
      return { $ref: `#/components/parameters/${name}` }
    })
  }
  const components = doc.components as Json
  return { ...doc, paths, components: { ...components, headers, parameters } }
}
