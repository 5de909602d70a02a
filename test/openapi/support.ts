import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { ValidateFunction } from 'ajv'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../config.js'
import { addConventionFormats } from '../../schemas/formats.js'
import { SECRET } from '../resource/helper.js'

export type Doc = Record<string, any>
export { atPointer, resolveRefs } from './refs.js'

/** The reference service (app.ts) on an in-memory PGlite, closed on teardown. */
export async function referenceApp (t: { teardown: (fn: () => unknown) => void }, env: Record<string, string> = {}): Promise<FastifyInstance> {
  const { config } = loadConfig({ LOG_LEVEL: 'silent', AUTH_JWT_SECRET: SECRET, DATA_DIR: 'memory', ...env })
  const app = await buildApp(config)
  t.teardown(() => app.close())
  await app.ready()
  return app
}

/**
 * Compiles schemas of the document with Ajv 2020 (the dialect of OpenAPI 3.1), their
 * `#/components/schemas/…` references resolved against the document's own components.
 */
export function documentValidator (doc: Doc): (schema: unknown) => ValidateFunction {
  const ajv = new Ajv2020({ allErrors: true, strict: false })
  addFormats.default(ajv)
  addConventionFormats(ajv as never)
  ajv.addSchema({ $id: 'https://svc.test/openapi.json', components: doc.components })
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite)
    if (typeof node !== 'object' || node === null) return node
    return Object.fromEntries(Object.entries(node).map(([k, v]) =>
      [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/components/') ? `https://svc.test/openapi.json${v}` : rewrite(v)]))
  }
  const cache = new Map<string, ValidateFunction>()
  return (schema) => {
    const key = JSON.stringify(schema)
    let fn = cache.get(key)
    if (fn === undefined) {
      fn = ajv.compile(rewrite(schema) as object)
      cache.set(key, fn)
    }
    return fn
  }
}

/**
 * The document with its shared parameters, request bodies, responses and headers
 * (`components.parameters`, `…requestBodies`, `…responses`, `…headers`) written where they
 * are referred to, and each path's own parameters added to its operations (OpenAPI 3.1
 * §4.8.9.1), for tests that read them per operation; schemas keep their `$ref`s.
 */
export function inlineHeaders (doc: Doc): Doc {
  const out = structuredClone(doc)
  const follow = (value: Doc): Doc => {
    const ref = value.$ref as string | undefined
    if (ref === undefined) return value
    const [, , kind, name] = ref.split('/')
    return structuredClone(out.components[kind as string][name as string])
  }
  for (const item of Object.values(out.paths as Doc)) {
    const shared = (item.parameters ?? []) as Doc[]
    delete item.parameters
    for (const op of Object.values(item as Doc)) {
      if (typeof op !== 'object' || op === null || op.responses === undefined) continue
      const own = (op.parameters ?? []) as Doc[]
      // Path parameters first, as the operations declare them; then the path's shared headers.
      const all = [...own.filter(p => follow(p).in === 'path'), ...shared, ...own.filter(p => follow(p).in !== 'path')]
      if (all.length > 0) op.parameters = all.map(follow)
      if (op.requestBody !== undefined) op.requestBody = follow(op.requestBody)
      op.responses = Object.fromEntries(Object.entries(op.responses as Doc).map(([status, r]) => [status, follow(r)]))
      for (const r of Object.values(op.responses as Doc)) {
        if (r.headers !== undefined) r.headers = Object.fromEntries(Object.entries(r.headers as Doc).map(([k, h]) => [k, follow(h)]))
      }
    }
  }
  return out
}

/**
 * The response an operation documents for `status`: its own entry, else its `default` when
 * that stands for the status (the statuses its description names: the common problems, stated
 * once). Shared responses are followed.
 */
export function responseFor (doc: Doc, op: Doc | undefined, status: number | string): Doc | undefined {
  const follow = (r: Doc | undefined): Doc | undefined => typeof r?.$ref === 'string' ? doc.components.responses[r.$ref.split('/').pop() as string] : r
  const own = follow(op?.responses?.[String(status)])
  if (own !== undefined) return own
  const fallback = follow(op?.responses?.default)
  const named = String(fallback?.description ?? '').match(/^A problem \(RFC 9457\): ([^,]*(?:, [^,]*)*?), as the operation allows/)?.[1] ?? ''
  return named.split(/, | or /).includes(String(status)) ? fallback : undefined
}

/**
 * The names of the headers a response documents: its own, and the document's
 * `x-response-headers`, which every answer carries where their rule applies.
 */
export function documentedHeaders (doc: Doc, response: Doc | undefined): string[] {
  return [...Object.keys(response?.headers ?? {}), ...Object.keys(doc['x-response-headers'] ?? {})]
}
