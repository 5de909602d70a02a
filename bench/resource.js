// Single documents on the seeded database (run.js), the reference service against the
// hand-written baseline (servers/pg-bare.js):
// - GET `/v1/documents/{id}` of random seeded documents;
// - POST `/v1/documents`, a new name each;
// - PATCH `/v1/documents/{id}`, a merge patch of the description with `If-Match`, each
//   document sent with the ETag its last PATCH answered;
// - signed scanner webhook deliveries (Standard Webhooks, a new webhook-id each): the
//   signature checked, then the delivery id recorded and the document updated together.
// Before the load, both servers are checked to answer alike: the same document, created
// documents with the same fields, PATCHes and webhook deliveries with the same statuses and
// effects.
import { randomUUID } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import pg from 'pg'
import { load, pairedRounds, settings } from './lib/harness.js'
import { call, headers, jsonHeaders, signedDelivery, startBare, startService } from './lib/service.js'
import { authorIds } from './seed.js'

const WEBHOOK_PATH = '/_webhooks/scanner/document-scanned'
const patchHeaders = { ...headers, 'content-type': 'application/merge-patch+json' }

let n = 0
const newDocument = () => ({ name: `bench-${process.pid}-${++n}`, authorId: authorIds(1)[0], kind: 'INVOICE', tags: ['a'], amount: '1.25' })

/** A request's answer: status, ETag and body text. */
async function send (server, method, path, { headers: sent = headers, body } = {}) {
  const res = await fetch(server.base + path, { method, headers: sent, body })
  return { status: res.status, etag: res.headers.get('etag'), text: await res.text() }
}

const patch = (server, id, etag, description) =>
  send(server, 'PATCH', `/v1/documents/${id}`, { headers: { ...patchHeaders, 'if-match': etag }, body: JSON.stringify({ description }) })

/** Both servers' GET of document `id`, checked to be the same document; returns it. */
async function sameDocument (service, bare, id, after = '') {
  const [mine, theirs] = await Promise.all([service, bare].map((s) => call(s, 'GET', `/v1/documents/${id}`)))
  if (!isDeepStrictEqual(mine, theirs)) throw new Error(`GET /v1/documents/${id}${after === '' ? '' : ` after ${after}`}: the baseline's document differs from the service's`)
  return mine
}

/**
 * A PATCH of document `id` by each server in turn, with the ETag the other's answered: 204, a new
 * ETag, and the change seen alike by both servers' GET. Then the stale ETag: 412 from both.
 */
async function checkPatch (service, bare, id) {
  let etag = (await sameDocument(service, bare, id)).etag
  const stale = etag
  for (const [name, server] of [['baseline', bare], ['service', service]]) {
    const description = `patched by the ${name}`
    const res = await patch(server, id, etag, description)
    if (res.status !== 204 || res.etag === null || res.etag === etag) throw new Error(`PATCH /v1/documents/${id} (the ${name}): ${res.status}, ETag ${res.etag} after ${etag}: ${res.text.slice(0, 300)}`)
    const doc = await sameDocument(service, bare, id, `the ${name}'s PATCH`)
    if (doc.description !== description || doc.etag !== res.etag) throw new Error(`PATCH /v1/documents/${id} (the ${name}): the change is not what GET answers`)
    etag = res.etag
  }
  for (const [name, server] of [['baseline', bare], ['service', service]]) {
    const res = await patch(server, id, stale, 'stale')
    if (res.status !== 412) throw new Error(`PATCH /v1/documents/${id} (the ${name}) with a stale ETag: ${res.status}, expected 412`)
  }
}

/**
 * On each server: a delivery for a document that does not exist answers 404 and records nothing,
 * so the same delivery id then changes document `id` (204); sent again, it changes nothing (204).
 */
async function checkWebhook (service, bare, id) {
  for (const [name, server] of [['baseline', bare], ['service', service]]) {
    const deliveryId = `msg_check_${name}_${process.pid}`
    const deliver = async (documentId, pageCount, expect) => {
      const body = JSON.stringify({ documentId, pageCount, fingerprint: `${deliveryId}-${pageCount}` })
      const res = await send(server, 'POST', WEBHOOK_PATH, { headers: { ...headers, ...signedDelivery(deliveryId, body) }, body })
      if (res.status !== expect) throw new Error(`webhook delivery (the ${name}): ${res.status}, expected ${expect}: ${res.text.slice(0, 300)}`)
    }
    const pageCount = name === 'baseline' ? 7 : 8
    await deliver(randomUUID(), 1, 404)
    await deliver(id, pageCount, 204)
    await deliver(id, 99, 204)
    const doc = await sameDocument(service, bare, id, `the ${name}'s webhook deliveries`)
    if (doc.pageCount !== pageCount) throw new Error(`webhook delivery (the ${name}): pageCount ${doc.pageCount}, expected ${pageCount}`)
  }
}

/**
 * Documents to PATCH under load, each with its current ETag, each sent by one request at a time:
 * taken when a request is made, put back with the ETag of its 204. autocannon clears a
 * connection's `context` each time it starts its list of requests again, so the ETags are kept
 * here, not there. A document whose answer a load's end cut off is not used again: its ETag is
 * unknown.
 */
function patchPool (rows) {
  const free = rows.map((r) => ({ id: r.id, etag: r.etag }))
  const requests = [{
    method: 'PATCH',
    setupRequest: (req, context) => {
      const doc = free.shift()
      context.doc = doc
      return { ...req, path: `/v1/documents/${doc.id}`, headers: { ...req.headers, 'if-match': doc.etag }, body: JSON.stringify({ description: `bench-${++n}` }) }
    },
    onResponse: (status, _body, context, answered) => {
      const etag = Object.entries(answered).find(([k]) => k.toLowerCase() === 'etag')?.[1]
      if (status !== 204 || etag === undefined) return
      context.doc.etag = etag
      free.push(context.doc)
    }
  }]
  // Each connection holds one document at a time: with fewer free, a load would run out.
  const loader = async (server, options) => {
    const connections = options.connections ?? settings.connections
    if (free.length < connections) throw new Error(`PATCH: ${free.length} documents left to patch, too few for ${connections} connections`)
    return await load(server, options)
  }
  return { requests, loader }
}

/** Documents a PATCH case needs: each load (the rounds and a warm-up per set) may leave one per connection unusable. */
const patchedPerServer = () => settings.connections * (settings.rounds + Math.min(settings.processes, settings.rounds) + 2)

export async function runResource ({ url, log }) {
  const db = new pg.Client({ connectionString: url })
  await db.connect()
  const patched = patchedPerServer()
  let rows
  try {
    // Apart: the documents read and sent webhooks, those each server patches, and one for the checks.
    rows = (await db.query("SELECT id, etag FROM documents WHERE ctx = 'prod' ORDER BY random() LIMIT $1", [1001 + 2 * patched])).rows
  } finally {
    await db.end()
  }
  if (rows.length < 1001 + 2 * patched) throw new Error(`single documents: ${rows.length} documents seeded, ${1001 + 2 * patched} needed`)
  const ids = rows.slice(0, 1000).map((r) => r.id)
  const checked = rows[1000].id
  const pools = { bare: patchPool(rows.slice(1001, 1001 + patched)), service: patchPool(rows.slice(1001 + patched)) }

  const service = await startService(url)
  const bare = await startBare(url)
  try {
    await sameDocument(service, bare, ids[0])
    const created = await Promise.all([service, bare].map((s) => call(s, 'POST', '/v1/documents', { body: newDocument(), expect: 201 })))
    const [mine, theirs] = created.map((doc) => Object.keys(doc).sort().join())
    if (mine !== theirs) throw new Error(`POST /v1/documents: the baseline's fields (${theirs}) differ from the service's (${mine})`)
    await checkPatch(service, bare, checked)
    await checkWebhook(service, bare, checked)
  } finally {
    await service.stop()
    await bare.stop()
  }

  const get = [{ setupRequest: (req) => ({ ...req, path: `/v1/documents/${ids[Math.floor(Math.random() * ids.length)]}` }) }]
  const post = [{ method: 'POST', path: '/v1/documents', setupRequest: (req) => ({ ...req, body: JSON.stringify(newDocument()) }) }]
  // Signed as it is sent, so the timestamp is fresh; spread over the sampled documents.
  const webhook = [{
    method: 'POST',
    path: WEBHOOK_PATH,
    setupRequest: (req) => {
      const id = `msg_${process.pid}_${++n}`
      const body = JSON.stringify({ documentId: ids[n % ids.length], pageCount: n % 1000, fingerprint: id })
      return { ...req, headers: { ...req.headers, ...signedDelivery(id, body) }, body }
    }
  }]
  const cases = {}
  for (const [scenario, spec] of [['get', { headers, requests: get }], ['post', { headers: jsonHeaders, requests: post }], ['webhook', { headers, requests: webhook }]]) {
    for (const server of ['bare', 'service']) cases[`${scenario} ${server}`] = { server, ...spec }
  }
  for (const server of ['bare', 'service']) cases[`patch ${server}`] = { server, method: 'PATCH', headers: patchHeaders, ...pools[server] }
  return await pairedRounds({ start: async () => ({ service: await startService(url), bare: await startBare(url) }), cases, log })
}
