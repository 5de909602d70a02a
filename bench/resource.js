// Single documents on the seeded database (run.js), the reference service against the
// hand-written baseline (servers/pg-bare.js):
// - GET `/v1/documents/{id}` of random seeded documents;
// - POST `/v1/documents`, a new name each;
// - signed scanner webhook deliveries (Standard Webhooks, a new webhook-id each): the
//   signature checked, the delivery id recorded and the document updated in one transaction.
// Before the load, both servers are checked to answer alike: the same document, and
// created documents with the same fields.
import { isDeepStrictEqual } from 'node:util'
import pg from 'pg'
import { pairedRounds } from './lib/harness.js'
import { call, headers, jsonHeaders, signedDelivery, startBare, startService } from './lib/service.js'
import { authorIds } from './seed.js'

const WEBHOOK_PATH = '/_webhooks/scanner/document-scanned'

let n = 0
const newDocument = () => ({ name: `bench-${process.pid}-${++n}`, authorId: authorIds(1)[0], kind: 'INVOICE', tags: ['a'], amount: '1.25' })

export async function runResource ({ url, log }) {
  const db = new pg.Client({ connectionString: url })
  await db.connect()
  let ids
  try {
    ids = (await db.query("SELECT id FROM documents WHERE ctx = 'prod' ORDER BY random() LIMIT 1000")).rows.map((r) => r.id)
  } finally {
    await db.end()
  }
  const service = await startService(url)
  const bare = await startBare(url)
  try {
    const path = `/v1/documents/${ids[0]}`
    if (!isDeepStrictEqual(await call(bare, 'GET', path), await call(service, 'GET', path))) throw new Error(`GET ${path}: the baseline's document differs from the service's`)
    const created = await Promise.all([service, bare].map((s) => call(s, 'POST', '/v1/documents', { body: newDocument(), expect: 201 })))
    const [mine, theirs] = created.map((doc) => Object.keys(doc).sort().join())
    if (mine !== theirs) throw new Error(`POST /v1/documents: the baseline's fields (${theirs}) differ from the service's (${mine})`)
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
  return await pairedRounds({ start: async () => ({ service: await startService(url), bare: await startBare(url) }), cases, log })
}
