import { STATUS_CODES } from 'node:http'
import { WEBHOOK_PREFIX } from '../webhooks/index.js'

/*
 * Stable names of operations, derived from the method and the path as the convention shapes
 * it (`/v1/<collection>/{<entity>Id}`, `…/search`, `/_webhooks/…`): `listAuthors`,
 * `getAuthor`, `createAuthor`, `bulkAuthors`, `listAuthorDocuments`. Clients generate one
 * function per operationId, so it must not change while the path and method do not.
 */

/** What kind of operation a route is, and the nouns it is about. */
export interface OperationName {
  operationId: string
  kind: 'item' | 'collection' | 'search' | 'other'
  /** The entity (`author`) of an item, the collection (`documents`) otherwise. */
  noun: string
  /** The item above, on a nested path (`author` of `/authors/{authorId}/documents`). */
  parent: string | null
}

const VERSION = /^v\d+$/
const ITEM_VERBS: Record<string, string> = { GET: 'get', HEAD: 'head', PUT: 'replace', PATCH: 'update', DELETE: 'delete' }
const COLLECTION_VERBS: Record<string, string> = { GET: 'list', HEAD: 'head', POST: 'create', PATCH: 'bulk', PUT: 'replace', DELETE: 'delete' }

const pascal = (words: readonly string[]): string =>
  words.flatMap(w => w.split(/[^A-Za-z0-9]+/)).filter(w => w !== '').map(w => w.charAt(0).toUpperCase() + w.slice(1)).join('')

/**
 * Names the operation `method` of `url` (Fastify's form, `:param`). `collections` maps a
 * served collection to its entity (`authors` → `author`); `collectionRead` marks a route of
 * the query plugin (`config.collection`), a collection whatever its name.
 */
export function nameOperation (method: string, url: string, collections: ReadonlyMap<string, string>, collectionRead: boolean): OperationName {
  const parts = url.split('/').filter(s => s !== '' && !VERSION.test(s))
  const verb = method.toLowerCase()
  if (url.startsWith(WEBHOOK_PREFIX)) {
    // A consumer receives deliveries, whatever method its producer uses; OPTIONS is the methods plugin's.
    return { operationId: `${method === 'OPTIONS' ? 'options' : 'receive'}${pascal(parts.slice(1))}`, kind: 'other', noun: parts.slice(1).join(' '), parent: null }
  }
  // A static segment and its item's parameter name one entity: `authors/:authorId` → author.
  const words: string[] = []
  parts.forEach((p, i) => {
    if (p.startsWith(':')) return
    const param = parts[i + 1]?.startsWith(':') === true ? (parts[i + 1] as string).slice(1) : null
    words.push(param === null ? p : param.length > 2 && param.endsWith('Id') ? param.slice(0, -2) : collections.get(p) ?? p)
  })
  const last = parts.at(-1) ?? ''
  const noun = words.at(-1) ?? ''
  const parent = words.length > 1 ? words.at(-2) as string : null
  if (last.startsWith(':') && ITEM_VERBS[method] !== undefined) {
    return { operationId: `${ITEM_VERBS[method]}${pascal(words)}`, kind: 'item', noun, parent }
  }
  if (last === 'search' && method === 'POST' && words.length > 1) {
    const of = words.slice(0, -1)
    return { operationId: `search${pascal(of)}`, kind: 'search', noun: of.at(-1) as string, parent: of.length > 1 ? of.at(-2) as string : null }
  }
  if ((collections.has(last) || collectionRead) && COLLECTION_VERBS[method] !== undefined) {
    const singular = method === 'POST' ? [...words.slice(0, -1), collections.get(last) ?? noun] : words
    return { operationId: `${COLLECTION_VERBS[method]}${pascal(singular)}`, kind: 'collection', noun, parent }
  }
  return { operationId: `${verb}${pascal(words)}`, kind: 'other', noun, parent }
}

/**
 * What a success answer is, for its description (instead of @fastify/swagger's "Default
 * Response"): the entity, a page, the created entity, one result per bulk operation.
 */
export function successDescription (method: string, status: number, name: OperationName, collections: ReadonlyMap<string, string>): string {
  const of = name.parent === null ? '' : ` of the ${name.parent}`
  if (method === 'HEAD') return `The headers a GET answers with ${status}, without a body.`
  if (name.kind === 'item' && status === 200) return `The ${name.noun}.`
  if (name.kind === 'search' && status === 200) return `A page of the ${name.noun}${of} that match the search.`
  if (name.kind === 'collection' && status === 200 && method === 'GET') return `A page of the ${name.noun}${of}.`
  if (name.kind === 'collection' && status === 200 && method === 'PATCH') return 'One result per operation, in the order of the request.'
  if (name.kind === 'collection' && status === 201) return `The created ${collections.get(name.noun) ?? name.noun}${of}, at the path in Location.`
  return STATUS_CODES[status] ?? String(status)
}
