import { PROBLEM_MEDIA_TYPE } from '../../schemas/problem.js'
import { canonical } from './components.js'
import { isProblem, operations } from './lean.js'

/*
 * What the suite's plugins do on every operation, stated once instead of on each of them.
 * OpenAPI 3.1 has no place for a document's common headers, and a response per status
 * repeats one problem body many times over: the problems any operation may answer are its
 * `default` response (OpenAPI 3.1 §4.8.16: every status not listed), and the headers of the
 * convention that every request may send and every answer carries go to the document's
 * `x-request-headers` and `x-response-headers`, which the description points to.
 */

type Json = Record<string, unknown>

const list = (statuses: readonly number[]): string =>
  statuses.length < 2 ? statuses.join('') : `${statuses.slice(0, -1).join(', ')} or ${String(statuses.at(-1))}`

/**
 * The `default` response's description: the statuses it stands for and when each applies,
 * so that a reader can tell an operation's from its parameters, body and security.
 */
export function problemsDescription (statuses: readonly number[]): string {
  // Short: the document repeats it per set of headers, and it is bounded (test/openapi/document.test.ts).
  return `A problem (RFC 9457): ${list(statuses)}, as the operation allows (401 where it takes a token, 404 where it names an item, 413 and 415 where it takes a body).`
}

/**
 * The problem responses of `statuses` of each operation of `paths` become its `default`
 * response, with the headers of all of them, in place. Other statuses (a conflict, a failed
 * precondition) stay listed: they are what the operation itself can refuse. An operation
 * with a `default` of its own keeps its responses.
 */
export function foldProblems (paths: Json, statuses: readonly number[]): void {
  const folded = new Set(statuses.map(String))
  const description = problemsDescription([...statuses].sort((a, b) => a - b))
  for (const op of operations(paths)) {
    const responses = op.responses as Record<string, Json>
    if (responses.default !== undefined) continue
    const taken = Object.keys(responses).filter(s => folded.has(s) && isProblem(responses[s] as Json))
    if (taken.length === 0) continue
    const headers: Json = {}
    for (const status of taken) {
      Object.assign(headers, (responses[status] as Json).headers)
      delete responses[status]
    }
    responses.default = {
      description,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      content: { [PROBLEM_MEDIA_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } } }
    }
  }
}

/** The names stated once: request headers (parameters `in: header`) and response headers, in their usual case. */
export interface DocumentHeaders { request: readonly string[], response: readonly string[] }

/**
 * Takes the headers `names` lists out of every operation and response of `doc` into its
 * `x-request-headers` (parameter objects) and `x-response-headers` (header objects), and says
 * so in `info.description`. Where a rule is off (a webhook consumer takes no User-Agent) the
 * header's own description tells when it applies. A name whose definition differs between two places is left where
 * it is: one definition could not say both. Returns a copy.
 */
export function stateHeadersOnce (doc: Json, names: DocumentHeaders): Json {
  const paths = structuredClone(doc.paths as Json)
  const items = Object.values(paths) as Json[]
  const ops = operations(paths)
  const holders = [...items, ...ops]
  const parameters = holders.flatMap(h => ((h.parameters ?? []) as Json[]).filter(p => p.in === 'header'))
  const responses = ops.flatMap(op => Object.values(op.responses as Record<string, Json>))

  const once = <T>(found: Array<[string, T]>, wanted: readonly string[]): Map<string, T> => {
    const first = new Map<string, T>()
    const conflicting = new Set<string>()
    for (const [name, value] of found) {
      if (!wanted.includes(name)) continue
      const seen = first.get(name)
      if (seen === undefined) first.set(name, value)
      else if (canonical(seen) !== canonical(value)) conflicting.add(name)
    }
    for (const name of conflicting) first.delete(name)
    return first
  }
  const request = once(parameters.map(p => [String(p.name), p]), names.request)
  const response = once(responses.flatMap(r => Object.entries((r.headers ?? {}) as Json)), names.response)

  for (const holder of holders) {
    if (holder.parameters === undefined) continue
    const own = (holder.parameters as Json[]).filter(p => !(p.in === 'header' && request.has(String(p.name))))
    if (own.length > 0) holder.parameters = own
    else delete holder.parameters
  }
  for (const r of responses) {
    if (r.headers === undefined) continue
    const own = Object.entries(r.headers as Json).filter(([name]) => !response.has(name))
    if (own.length > 0) r.headers = Object.fromEntries(own)
    else delete r.headers
  }

  const out: Json = { ...doc, paths }
  const said: string[] = []
  if (request.size > 0) {
    out['x-request-headers'] = [...request.values()]
    said.push(`requests send those of \`x-request-headers\` (${[...request.keys()].join(', ')})`)
  }
  if (response.size > 0) {
    out['x-response-headers'] = Object.fromEntries(response)
    said.push(`answers carry those of \`x-response-headers\` (${[...response.keys()].join(', ')})`)
  }
  if (said.length > 0) {
    const info = (doc.info ?? {}) as Json
    const text = `Headers the convention defines for every operation are described once, not on each: ${said.join(' and ')}, wherever their rule applies, as each one's description says.`
    out.info = { ...info, description: typeof info.description === 'string' ? `${info.description}\n\n${text}` : text }
  }
  return out
}
