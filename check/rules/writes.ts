// With --writes: entities of the check's own, created, replaced, patched, deleted; the
// preconditions, idempotency keys and bulk (conventions: Method rules 3, 8–10, 13; Headers,
// Svc-Idempotency-Key; Bulk endpoint).
import { fail, itemPath, missingId, notApplicable, notChecked, pass, refusedCredentials, statusFault, type Context, type Created, type Item, type Outcome } from '../context.js'
import { makeValue } from '../entity.js'
import { DELETION_REQUESTS } from '../http.js'
import { propertiesOf, resolve, type Collection, type Json } from '../openapi.js'
import type { Exchange } from '../types.js'
import type { Rule } from './rule.js'

const METHODS = 'Method rules'
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const tag = (): string => `svc-check-${Math.random().toString(36).slice(2, 10)}`
const idemKey = (): string => `svc-check-${crypto.randomUUID()}`
const JSON_TYPE = { 'content-type': 'application/json' }

/**
 * The id of what a POST created: the body's `id`, else the last segment of its `Location` (the
 * convention asks for a reference, in the body or in `Location`, or both: Method rules 3).
 */
function createdId (ex: Exchange): string | null {
  const id = (ex.response.json as { id?: unknown } | undefined)?.id
  if (typeof id === 'string') return id
  const location = ex.response.headers.location
  if (location === undefined) return null
  try {
    const last = new URL(location, 'http://svc-check.invalid').pathname.split('/').filter(Boolean).pop()
    return last === undefined ? null : decodeURIComponent(last)
  } catch {
    return null
  }
}

/**
 * Records what a POST created, to be deleted at the end: an answer 2xx with a reference. A 200 is
 * not a create's answer (methods.create fails it), but what it made is the check's all the same.
 * With --writes the requests of its deletion are held back from the budget. A 201 without a
 * reference is listed as left behind: nothing says where it is.
 */
export function noteCreated (ctx: Context, c: Collection, ex: Exchange): Created | null {
  const { status } = ex.response
  if (status < 200 || status > 299) return null
  const id = createdId(ex)
  if (id === null) {
    if (status === 201) ctx.leftBehind.push(`what POST ${ex.request.path} created (a 201 with neither an id nor a Location: the check cannot find it)`)
    return null
  }
  // A repeated POST answered with the same entity (an idempotency key replayed) created nothing more.
  const known = ctx.created.find(e => e.collection === c && e.id === id)
  if (known !== undefined) return known
  const e: Created = { collection: c, id, path: itemPath(c, id), exchange: ex, state: 'live' }
  ctx.created.push(e)
  if (ctx.writes && c.delete) ctx.http.reserve(DELETION_REQUESTS)
  return e
}

/** Creates one entity in each collection that takes a POST, references filled from the earlier ones. */
export async function createEntities (ctx: Context): Promise<void> {
  const doc = ctx.document
  const candidates = ctx.model.collections.filter(c => c.create !== null && c.itemPath !== null)
  if (doc === null || candidates.length === 0) {
    ctx.createFailure = doc === null ? 'no OpenAPI document to build an entity from (--openapi)' : null
    return
  }
  // References point at entities that were there before the check where it can: its own would
  // then be referred to by nothing, and deleting it at the end is never refused (409).
  const refs = new Map<string, string>()
  for (const sample of ctx.samples) {
    const id = sample.items[0]?.id
    if (typeof id === 'string') refs.set(sample.collection.singular, id)
  }
  const failures: string[] = []
  // Two passes: a collection whose entities refer to a later one gets its reference the second time.
  const done = new Set<Collection>()
  for (let pass = 0; pass < 2; pass++) {
    for (const c of candidates) {
      if (done.has(c) || ctx.created.some(e => e.collection === c)) continue
      const made = makeValue(doc, c.create as Record<string, unknown>, c.singular, tag(), refs)
      const ex = await ctx.http.send({ method: 'POST', path: c.path, headers: JSON_TYPE, body: JSON.stringify(made.value), creates: true })
      const created = noteCreated(ctx, c, ex)
      if (created !== null && !refs.has(c.singular)) refs.set(c.singular, created.id)
      // A 2xx without a reference made something all the same: a second POST would make another.
      if (ex.response.status >= 200 && ex.response.status < 300) done.add(c)
      if (created === null && (pass === 1 || done.has(c))) failures.push(`POST ${c.path} answered ${ex.response.status}`)
    }
  }
  if (ctx.created.length === 0) ctx.createFailure = `no entity could be created (${failures.join('; ')})`
}

/** The rule's precondition: --writes and an entity to work on. */
function entities (ctx: Context, which: (c: Collection) => boolean, what: string): Created[] | Outcome {
  if (!ctx.writes) return notChecked('needs --writes')
  if (ctx.created.length === 0) return ctx.createFailure === null ? notApplicable('no collection takes a POST in the document') : notChecked(ctx.createFailure)
  const list = ctx.created.filter(e => e.state === 'live' && which(e.collection))
  return list.length === 0 ? notApplicable(`no collection the check created in offers ${what}`) : list
}

async function read (ctx: Context, e: Created, reserved = false): Promise<{ ex: Exchange, body: Item, etag: string | undefined }> {
  const ex = await ctx.http.send({ path: e.path, reserved })
  return { ex, body: isObject(ex.response.json) ? ex.response.json : {}, etag: ex.response.headers.etag }
}

/** The entity as a replacement body: the writable properties of the PUT schema it has. */
function replacement (ctx: Context, c: Collection, body: Item): Record<string, Json> {
  const doc = ctx.document ?? {}
  const props = propertiesOf(doc, resolve(doc, c.replace ?? c.create ?? {}))
  const out: Record<string, Json> = {}
  for (const [key, schema] of Object.entries(props)) if (key in body && schema.readOnly !== true && key !== 'id') out[key] = body[key] as Json
  return out
}

/** A string property the entity has that the check can change (its name first). */
function changeable (ctx: Context, c: Collection, body: Item): string | undefined {
  const keys = Object.keys(replacement(ctx, c, body)).filter(k => typeof body[k] === 'string' && !k.endsWith('Id'))
  const doc = ctx.document ?? {}
  const props = propertiesOf(doc, resolve(doc, c.create ?? {}))
  return keys.find(k => k === 'name') ?? keys.find(k => props[k]?.format === undefined && props[k]?.enum === undefined && props[k]?.pattern === undefined)
}

/**
 * After a write answered 204: the GET shows the changed value, and a new ETag when the entity
 * had one. The convention does not ask the 204 for an ETag; one it carries is the new one,
 * the ETag the GET answers.
 */
async function newEtag (ctx: Context, e: Created, before: string | undefined, ex: Exchange, changed?: [string, Json | undefined]): Promise<Outcome> {
  const etag = ex.response.headers.etag
  if (before !== undefined && changed !== undefined && etag === before) return fail('the 204 carries the ETag of before the write', ex)
  const after = await read(ctx, e)
  if (etag !== undefined && after.etag !== etag) return fail(`GET answers the ETag ${after.etag ?? 'none'}, the write answered ${etag}`, after.ex)
  if (before !== undefined && changed !== undefined && after.etag === before) return fail('the ETag did not change with the entity', after.ex)
  if (changed !== undefined && after.body[changed[0]] !== changed[1]) return fail(`${changed[0]} is not the value written`, after.ex)
  return pass()
}

const ifMatch = (etag: string | undefined): Record<string, string> => etag === undefined ? {} : { 'if-match': etag }

export const writeRules: Rule[] = [
  {
    id: 'methods.create',
    section: METHODS,
    title: 'POST creates: 201 and a reference, Location (which answers the entity) or the id in the body',
    writes: true,
    async run (ctx) {
      const list = entities(ctx, () => true, 'a POST')
      if (!Array.isArray(list)) return list
      for (const e of list) {
        const body = e.exchange.response.json
        const fault = statusFault(e.exchange, 201)
        if (fault !== null) return fail(`POST ${e.exchange.request.path} created ${e.path}: ${fault}`, e.exchange)
        if (e.exchange.response.text !== '' && !isObject(body)) return fail('the 201 body is not a JSON object', e.exchange)
        const location = e.exchange.response.headers.location
        // Without Location the reference is the id in the body, which is how the check found it.
        if (location === undefined) continue
        // Another scheme, host or port is another service: no request, and no token, goes there.
        const target = URL.parse(location, ctx.http.url(e.collection.path).href)
        if (target === null || !ctx.http.sameOrigin(target)) return fail(`Location points off the service: ${location}`, e.exchange)
        const got = await ctx.http.send({ path: target.href })
        if (got.response.status !== 200 || (got.response.json as { id?: unknown } | undefined)?.id !== e.id) return fail(`GET of the Location ${location} did not answer the entity created`, got)
      }
      return pass()
    }
  },
  {
    id: 'methods.put',
    section: METHODS,
    title: 'PUT replaces: 204, no body; the ETag changes',
    writes: true,
    async run (ctx) {
      const list = entities(ctx, c => c.replace !== null, 'PUT on an item')
      if (!Array.isArray(list)) return list
      const e = list[0] as Created
      const before = await read(ctx, e)
      const body = replacement(ctx, e.collection, before.body)
      const key = changeable(ctx, e.collection, before.body)
      if (key !== undefined) body[key] = tag()
      const ex = await ctx.http.send({ method: 'PUT', path: e.path, headers: { ...JSON_TYPE, ...ifMatch(before.etag) }, body: JSON.stringify(body) })
      const fault = statusFault(ex, 204)
      if (fault !== null) return fail(`PUT ${e.path}: ${fault}`, ex)
      if (ex.response.text !== '') return fail('a 204 with a body', ex)
      return await newEtag(ctx, e, before.etag, ex, key === undefined ? undefined : [key, body[key]])
    }
  },
  {
    id: 'methods.merge-patch',
    section: METHODS,
    title: 'PATCH is a JSON Merge Patch: 204, the ETag changes; omitted fields kept, null removes',
    writes: true,
    async run (ctx) {
      const list = entities(ctx, c => c.patch, 'PATCH on an item')
      if (!Array.isArray(list)) return list
      const doc = ctx.document ?? {}
      // The entity with a nullable string the check can set and remove, else the first.
      const nullableOf = (e: Created): string | undefined => Object.entries(propertiesOf(doc, resolve(doc, e.collection.create ?? {})))
        .find(([k, s]) => Array.isArray(s.type) && s.type.includes('null') && s.type.includes('string') && s.format === undefined && s.pattern === undefined && s.readOnly !== true && !k.endsWith('Id'))?.[0]
      const e = list.find(x => nullableOf(x) !== undefined) ?? list[0] as Created
      const nullable = nullableOf(e)
      const before = await read(ctx, e)
      const key = changeable(ctx, e.collection, before.body)
      const value = tag()
      const patch: Record<string, Json> = {}
      if (key !== undefined) patch[key] = value
      if (nullable !== undefined) patch[nullable] = 'svc-conventions check'
      const ex = await ctx.http.send({ method: 'PATCH', path: e.path, headers: { 'content-type': e.collection.patchType, ...ifMatch(before.etag) }, body: JSON.stringify(patch) })
      const fault = statusFault(ex, 204)
      if (fault !== null) return fail(`PATCH ${e.path}: ${fault}`, ex)
      const changed = await newEtag(ctx, e, before.etag, ex, key === undefined ? undefined : [key, value])
      if (changed.verdict !== 'pass') return changed
      const after = await read(ctx, e)
      const kept = Object.keys(replacement(ctx, e.collection, before.body)).filter(k => k !== key && k !== nullable)
      const lost = kept.find(k => JSON.stringify(after.body[k]) !== JSON.stringify(before.body[k]))
      if (lost !== undefined) return fail(`${lost}, not in the patch, changed`, after.ex)
      if (nullable === undefined) return pass()
      const removal = await ctx.http.send({ method: 'PATCH', path: e.path, headers: { 'content-type': e.collection.patchType, ...ifMatch(after.etag) }, body: JSON.stringify({ [nullable]: null }) })
      if (removal.response.status !== 204) return fail(`PATCH {"${nullable}": null}: expected 204, got ${removal.response.status}`, removal)
      const last = await read(ctx, e)
      if (last.body[nullable] !== null) return fail(`PATCH {"${nullable}": null} did not remove the value (null expected)`, last.ex)
      if (key !== undefined && last.body[key] !== value) return fail(`${key}, not in the patch, changed`, last.ex)
      return pass()
    }
  },
  {
    id: 'methods.if-match',
    section: METHODS,
    title: 'a stale If-Match is a 412',
    writes: true,
    async run (ctx) {
      const list = entities(ctx, c => c.patch, 'PATCH on an item')
      if (!Array.isArray(list)) return list
      const e = list[0] as Created
      const ex = await ctx.http.send({ method: 'PATCH', path: e.path, headers: { 'content-type': e.collection.patchType, 'if-match': '"svc-conventions-check-stale"' }, body: '{}' })
      const fault = statusFault(ex, 412)
      return fault === null ? pass() : fail(`PATCH with a stale If-Match: ${fault}`, ex)
    }
  },
  {
    id: 'methods.unmodified-since',
    section: METHODS,
    title: 'a write with an If-Unmodified-Since before the entity last changed is a 412',
    writes: true,
    async run (ctx) {
      const list = entities(ctx, c => c.patch, 'PATCH on an item')
      if (!Array.isArray(list)) return list
      for (const e of list) {
        // Created by this check, so changed long after this date.
        const ex = await ctx.http.send({ method: 'PATCH', path: e.path, headers: { 'content-type': e.collection.patchType, 'if-unmodified-since': 'Sun, 06 Nov 1994 08:49:37 GMT' }, body: '{}' })
        // Where If-Match is required, a date does not stand in for it; with it, the date is not weighed.
        if (ex.response.status === 428) continue
        const fault = statusFault(ex, 412)
        return fault === null ? pass() : fail(`PATCH with If-Unmodified-Since of 1994: ${fault}`, ex)
      }
      return notApplicable(`every collection the check wrote to requires If-Match, which comes before the date (${list.map(e => e.collection.path).join(', ')})`)
    }
  },
  {
    id: 'methods.if-match-required',
    section: METHODS,
    title: 'where If-Match is required, a write without it is a 428',
    writes: true,
    async run (ctx) {
      const list = entities(ctx, c => c.patch, 'PATCH on an item')
      if (!Array.isArray(list)) return list
      for (const e of list) {
        const ex = await ctx.http.send({ method: 'PATCH', path: e.path, headers: { 'content-type': e.collection.patchType }, body: '{}' })
        if (ex.response.status === 428) return pass()
        if (ex.response.status < 200 || ex.response.status > 299) return fail(`PATCH without If-Match: expected 428 (required) or a 2xx (not required), got ${ex.response.status}`, ex)
      }
      return notApplicable(`no collection the check wrote to requires If-Match (${list.map(e => e.collection.path).join(', ')})`)
    }
  },
  {
    id: 'idempotency.replay',
    section: 'Headers (Svc-Idempotency-Key)',
    title: 'a POST repeated with its Svc-Idempotency-Key is a 409, nothing created twice; a PUT repeated is a 2xx',
    writes: true,
    async run (ctx) {
      const list = entities(ctx, c => c.create !== null, 'a POST')
      if (!Array.isArray(list)) return list
      const e = list[0] as Created
      const key = idemKey()
      const body = replacement(ctx, e.collection, (await read(ctx, e)).body)
      const name = changeable(ctx, e.collection, body)
      if (name !== undefined) body[name] = tag()
      const first = await ctx.http.send({ method: 'POST', path: e.collection.path, headers: { ...JSON_TYPE, 'svc-idempotency-key': key }, body: JSON.stringify(body), creates: true })
      const created = noteCreated(ctx, e.collection, first)
      if (first.response.status !== 201 || created === null) return fail(first.response.status === 201 ? 'POST with a Svc-Idempotency-Key: a 201 with neither an id nor a Location' : `POST with a Svc-Idempotency-Key: expected 201, got ${first.response.status}`, first)
      ctx.usedKey = { key, collection: e.collection, body }
      const again = await ctx.http.send({ method: 'POST', path: e.collection.path, headers: { ...JSON_TYPE, 'svc-idempotency-key': key }, body: JSON.stringify(body), creates: true })
      noteCreated(ctx, e.collection, again)
      const fault = statusFault(again, 409)
      if (fault !== null) return fail(`the same POST with the same key: ${fault}`, again)
      // An idempotent method: the repeat is answered as the first was.
      for (const target of list.filter(x => x.collection.replace !== null)) {
        const current = await read(ctx, target)
        const put = JSON.stringify(replacement(ctx, target.collection, current.body))
        const putKey = idemKey()
        const one = await ctx.http.send({ method: 'PUT', path: target.path, headers: { ...JSON_TYPE, 'svc-idempotency-key': putKey }, body: put })
        if (one.response.status === 428) continue
        if (one.response.status < 200 || one.response.status > 299) return fail(`PUT with a Svc-Idempotency-Key: expected a 2xx, got ${one.response.status}`, one)
        const two = await ctx.http.send({ method: 'PUT', path: target.path, headers: { ...JSON_TYPE, 'svc-idempotency-key': putKey }, body: put })
        if (two.response.status !== one.response.status) return fail(`the same PUT with the same key: expected ${one.response.status} again, got ${two.response.status}`, two)
        break
      }
      return pass()
    }
  },
  {
    id: 'idempotency.reuse',
    section: 'Headers (Svc-Idempotency-Key)',
    title: 'a Svc-Idempotency-Key reused for another request is a 409',
    writes: true,
    async run (ctx) {
      const list = entities(ctx, c => c.create !== null, 'a POST')
      if (!Array.isArray(list)) return list
      const used = ctx.usedKey
      if (used === null) return notChecked('idempotency.replay did not run')
      const other = { ...used.body }
      const name = Object.keys(other).find(k => typeof other[k] === 'string' && !k.endsWith('Id'))
      if (name !== undefined) other[name] = tag()
      const ex = await ctx.http.send({ method: 'POST', path: used.collection.path, headers: { ...JSON_TYPE, 'svc-idempotency-key': used.key }, body: JSON.stringify(other), creates: true })
      noteCreated(ctx, used.collection, ex)
      const fault = statusFault(ex, 409)
      return fault === null ? pass() : fail(`the key of an earlier POST, another body: ${fault}`, ex)
    }
  },
  {
    id: 'bulk.request',
    section: 'Bulk endpoint',
    title: 'a bulk body without operations, naming one id twice, or over the maximum of operations is a 400',
    usesEntities: true,
    async run (ctx) {
      const c = ctx.model.collections.find(c => c.bulk)
      if (c === undefined) return notApplicable(ctx.model.documentSource === null ? 'no OpenAPI document names a bulk endpoint (--openapi)' : 'no bulk endpoint (PATCH on a collection) in the document')
      // No operations: nothing a service could apply.
      const empty = await ctx.http.send({ method: 'PATCH', path: c.path, headers: JSON_TYPE, body: '{"transactionMode":"ATOMIC"}' })
      const refused = refusedCredentials(ctx, empty, 'write')
      if (refused !== null) return refused
      const fault = statusFault(empty, 400)
      if (fault !== null) return fail(`a bulk body without operations: ${fault}`, empty)
      if (!ctx.writes) return pass()
      const e = ctx.created.find(x => x.collection.bulk && x.state === 'live')
      if (e === undefined) return pass()
      const body = replacement(ctx, e.collection, (await read(ctx, e)).body)
      const operation = { action: 'UPDATE', entity: { ...body, id: e.id } }
      const twice = await ctx.http.send({ method: 'PATCH', path: e.collection.path, headers: JSON_TYPE, body: JSON.stringify({ transactionMode: 'ATOMIC', operations: [operation, operation] }) })
      const dup = statusFault(twice, 400)
      if (dup !== null) return fail(`one id twice in a bulk request: ${dup}`, twice)
      // One operation more than the endpoint allows, each an update of an id no service holds:
      // refused whole with 400; were it applied, every operation would fail and change nothing.
      const max = e.collection.bulkMax ?? 100
      const over = Array.from({ length: max + 1 }, () => ({ action: 'UPDATE', entity: { ...body, id: missingId() } }))
      const tooMany = await ctx.http.send({ method: 'PATCH', path: e.collection.path, headers: JSON_TYPE, body: JSON.stringify({ transactionMode: 'ISOLATED', operations: over }) })
      const over400 = statusFault(tooMany, 400)
      return over400 === null ? pass() : fail(`${max + 1} operations where the endpoint allows ${max}${e.collection.bulkMax === null ? ' (the convention\'s default: the document states no maxItems)' : ''}: ${over400}`, tooMany)
    }
  },
  {
    id: 'bulk.response',
    section: 'Bulk endpoint',
    title: 'a bulk answer is 200 {status, operations} with one result per operation, in order, operationId echoed',
    writes: true,
    async run (ctx) {
      const list = entities(ctx, c => c.bulk, 'a bulk endpoint')
      if (!Array.isArray(list)) return list
      const e = list[0] as Created
      const current = await read(ctx, e)
      const operations = [
        { operationId: 'svc-check-update', action: 'UPDATE', ...(current.etag === undefined ? {} : { ifMatch: current.etag }), entity: { ...replacement(ctx, e.collection, current.body), id: e.id } },
        { action: 'UPDATE', entity: { ...replacement(ctx, e.collection, current.body), id: missingId() }, ifMatch: '"svc-conventions-check-stale"' }
      ]
      const ex = await ctx.http.send({ method: 'PATCH', path: e.collection.path, headers: JSON_TYPE, body: JSON.stringify({ transactionMode: 'ISOLATED', operations }) })
      const fault = statusFault(ex, 200)
      if (fault !== null) return fail(fault, ex)
      const body = ex.response.json as { status?: unknown, operations?: unknown }
      if (!isObject(body) || !Array.isArray(body.operations)) return fail('no operations array in the answer', ex)
      if (body.operations.length !== 2) return fail(`2 operations sent, ${body.operations.length} results`, ex)
      const results = body.operations as Array<Record<string, unknown>>
      const expectedIds = ['svc-check-update', '1']
      for (const [i, r] of results.entries()) {
        if (r.operationId !== expectedIds[i]) return fail(`result ${i}: operationId ${JSON.stringify(r.operationId)}, expected "${expectedIds[i] ?? ''}"`, ex)
        if (r.action !== 'UPDATE') return fail(`result ${i}: action ${JSON.stringify(r.action)} does not repeat the request's`, ex)
        const status = isObject(r.result) ? r.result.status : undefined
        if (status !== 'SUCCEEDED' && status !== 'FAILED') return fail(`result ${i}: result.status ${JSON.stringify(status)}`, ex)
      }
      const statuses = new Set(results.map(r => (r.result as { status: string }).status))
      const overall = statuses.size === 2 ? 'PARTIAL' : [...statuses][0]
      return body.status === overall ? pass() : fail(`status ${JSON.stringify(body.status)} with results ${[...statuses].join(' and ')}: expected ${overall ?? ''}`, ex)
    }
  },
  {
    id: 'methods.delete',
    section: METHODS,
    title: 'DELETE answers 204, and 204 again (or 404) when repeated; the entity is gone or marked deleted',
    writes: true,
    async run (ctx) {
      const list = entities(ctx, c => c.delete, 'DELETE on an item')
      if (!Array.isArray(list)) return list
      // Newest first, as at the end: an entity refers only to those created before it.
      for (const e of [...list].reverse()) {
        const ex = await remove(ctx, e)
        // Children of its own block it (409): the next one shows how the service deletes.
        if (ex.response.status === 409) continue
        const fault = statusFault(ex, 204)
        if (fault !== null) return fail(`DELETE ${e.path}: ${fault}`, ex)
        const again = await ctx.http.send({ method: 'DELETE', path: e.path })
        if (again.response.status !== 204 && again.response.status !== 404) return fail(`a repeated DELETE: expected 204 or 404, got ${again.response.status}`, again)
        const gone = await ctx.http.send({ path: e.path })
        const marked = gone.response.status === 200 && isObject(gone.response.json) && Object.entries(gone.response.json).some(([k, v]) => /^deleted/.test(k) && v !== null)
        return gone.response.status === 404 || marked ? pass() : fail(`GET after DELETE: expected 404 or the entity marked deleted, got ${gone.response.status}`, gone)
      }
      return notApplicable('nothing the check created could be deleted (children block it)')
    }
  }
]

/** Why the check does not delete one of its entities, or null when it does. */
function kept (ctx: Context, e: Created): string | null {
  if (!ctx.writes) return 'created by a POST the service should have refused; without --writes the check deletes nothing'
  return e.collection.delete ? null : ctx.document === null ? 'no document says how to delete it' : 'the document offers no DELETE'
}

/** Lists an entity of the check's as left behind, with the reason. */
function leave (ctx: Context, e: Created, why: string): void {
  e.state = 'left behind'
  ctx.leftBehind.push(`${e.path} (${why})`)
}

/**
 * Deletes one entity of the check's, with its ETag as If-Match, on the requests held back for it.
 * It is deleted once the DELETE is answered 2xx; otherwise left behind, with the answer.
 */
async function remove (ctx: Context, e: Created): Promise<Exchange> {
  try {
    const current = await read(ctx, e, true)
    const ex = await ctx.http.send({ method: 'DELETE', path: e.path, headers: ifMatch(current.etag), reserved: true })
    const { status } = ex.response
    if (status >= 200 && status < 300) e.state = 'deleted'
    else leave(ctx, e, `DELETE answered ${status}${typeof (ex.response.json as { detail?: unknown } | undefined)?.detail === 'string' ? `: ${(ex.response.json as { detail: string }).detail}` : ''}`)
    return ex
  } catch (err) {
    leave(ctx, e, `not deleted: ${(err as Error).message}`)
    throw err
  }
}

/** Deletes what the check created and has not deleted yet, newest first; what stays is left behind. */
export async function cleanUp (ctx: Context): Promise<void> {
  for (const e of [...ctx.created].reverse()) {
    if (e.state !== 'live') continue
    const why = kept(ctx, e)
    if (why !== null) {
      leave(ctx, e, why)
      continue
    }
    // One that cannot be deleted is listed as left behind, with the reason; the others are still tried.
    await remove(ctx, e).catch(() => undefined)
  }
}
