// The baseline of every case on PostgreSQL: bare Fastify + a pg Pool of the service's size,
// written by hand as a person would without the suite, on the reference service's tables
// (table `documents`, one column per field, text collated "C"). Plain columns are selected
// and formatted in JavaScript (date-times as ISO strings; pg gives numeric and bigint as
// text already); the answers have the service's shape, `ref` and `authorRef` included. No
// conventions, auth, validation or signed cursor: that is the suite's work, measured.
// Each request makes one round trip: one statement, named, so that each pooled connection
// parses and plans it once.
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import Fastify from 'fastify'
import pg from 'pg'
import { serveStats } from '../lib/harness.js'

// A `date` as its text, YYYY-MM-DD: pg's default makes it a Date at local midnight.
pg.types.setTypeParser(pg.types.builtins.DATE, (text) => text)

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
const app = Fastify({ logger: false })

const SUMMARY = `id, etag, "createdDateTime", "createdBy", "modifiedDateTime", "modifiedBy", name, description,
  "authorId", status, kind, "pageCount", "byteCount", amount, "discountPercentage", tags, "retentionDuration",
  "validityInterval", "reviewSchedule", "effectiveDate", "publishedDateTime", metadata, fingerprint, content, "deletedDateTime", "deletedBy"`
const ITEM = `${SUMMARY}, pages`

/** A row as the API writes a document (the summary has no `pages`). */
function toDocument (row) {
  const doc = {
    id: row.id,
    etag: row.etag,
    createdDateTime: row.createdDateTime.toISOString(),
    createdBy: row.createdBy,
    modifiedDateTime: row.modifiedDateTime.toISOString(),
    modifiedBy: row.modifiedBy,
    name: row.name,
    description: row.description,
    authorId: row.authorId,
    status: row.status,
    kind: row.kind,
    pageCount: row.pageCount,
    byteCount: row.byteCount,
    amount: row.amount,
    discountPercentage: row.discountPercentage,
    tags: row.tags
  }
  if (row.pages !== undefined) doc.pages = row.pages
  doc.retentionDuration = row.retentionDuration
  doc.validityInterval = row.validityInterval
  doc.reviewSchedule = row.reviewSchedule
  doc.effectiveDate = row.effectiveDate
  doc.publishedDateTime = row.publishedDateTime === null ? null : row.publishedDateTime.toISOString()
  doc.metadata = row.metadata
  doc.fingerprint = row.fingerprint
  doc.content = row.content
  doc.ref = `svc:document::${row.id}`
  doc.authorRef = `svc:author::${row.authorId}`
  doc.deletedDateTime = row.deletedDateTime === null ? null : row.deletedDateTime.toISOString()
  doc.deletedBy = row.deletedBy
  return doc
}

/** A new strong entity tag, as the column holds it (quoted). */
const newEtag = () => `"${randomBytes(12).toString('base64url')}"`

const getDocument = `SELECT ${ITEM} FROM documents WHERE ctx = $1 AND id = $2`
app.get('/v1/documents/:documentId', async (request, reply) => {
  const { rows } = await pool.query({ name: 'get-document', text: getDocument, values: ['prod', request.params.documentId] })
  if (rows.length === 0) return reply.code(404).send({ title: 'Not Found', status: 404 })
  return reply.header('etag', rows[0].etag).send(toDocument(rows[0]))
})

// A document's file, as the files plugin stores it (table documents_content): the bytes and
// their type, read in one statement and sent as they are.
const getContent = 'SELECT media_type, etag, bytes FROM documents_content WHERE ctx = $1 AND id = $2'
app.get('/v1/documents/:documentId/content', async (request, reply) => {
  const { rows } = await pool.query({ name: 'get-content', text: getContent, values: ['prod', request.params.documentId] })
  if (rows.length === 0) return reply.code(404).send({ title: 'Not Found', status: 404 })
  return reply.header('content-type', rows[0].media_type).header('etag', rows[0].etag).send(rows[0].bytes)
})

// A job's status monitor, as the jobs plugin stores a job (table jobs): its row in one
// statement, the result sent as the JSON text it is stored as, the rest formatted here.
const JOB = `id, kind, collection, subject, status, operation_count, completed_count, result, problem,
  created_at, modified_at, completed_at`
const jobJson = (j) => {
  const head = JSON.stringify({
    id: j.id,
    ref: `svc:job::${j.id}`,
    kind: j.kind,
    collection: j.collection,
    status: j.status,
    operationCount: j.operation_count,
    completedCount: j.completed_count,
    createdDateTime: j.created_at.toISOString(),
    createdBy: j.subject === '' ? null : j.subject,
    modifiedDateTime: j.modified_at.toISOString(),
    completedDateTime: j.completed_at === null ? null : j.completed_at.toISOString()
  })
  return `${head.slice(0, -1)},"result":${j.result ?? 'null'},"problem":${JSON.stringify(j.problem)}}`
}
const getJob = `SELECT ${JOB} FROM jobs WHERE ctx = $1 AND id = $2`
app.get('/v1/jobs/:jobId', async (request, reply) => {
  const { rows } = await pool.query({ name: 'get-job', text: getJob, values: ['prod', request.params.jobId] })
  if (rows.length === 0) return reply.code(404).send({ title: 'Not Found', status: 404 })
  return reply.type('application/json; charset=utf-8').send(jobJson(rows[0]))
})

// The page's orderings this route offers, creation order by default; the id last, so the
// order is total. Each with the fields of the last row that a next page's cursor starts after.
const ORDERINGS = {
  '': { orderBy: '"createdDateTime", id', key: ['createdDateTime', 'id'] },
  '-pageCount': { orderBy: '"pageCount" DESC, id', key: ['pageCount', 'id'] },
  '-pageCount,name': { orderBy: '"pageCount" DESC, name, id', key: ['pageCount', 'name', 'id'] }
}
// The filters, each optional: a query parameter, its condition and how its value is read.
const FILTERS = [
  { param: 'status', where: (n) => `status = $${n}`, value: String },
  { param: 'minPageCount', where: (n) => `"pageCount" >= $${n}`, value: Number },
  { param: 'kind', where: (n) => `kind = $${n}`, value: String }
]
const LIMIT = 20

// One named statement per ordering and set of filters given, made on first use.
const pageStatements = new Map()
function pageStatement (ordering, filters) {
  const name = `page:${ordering}:${filters.map((f) => f.param).join(',')}`
  let statement = pageStatements.get(name)
  if (statement === undefined) {
    // Documents are soft-deleted: pages leave the deleted ones out, as the service's do.
    const where = ['ctx = $1', '"deletedDateTime" IS NULL', ...filters.map((f, i) => f.where(i + 2))].join(' AND ')
    statement = { name, text: `SELECT ${SUMMARY} FROM documents WHERE ${where} ORDER BY ${ORDERINGS[ordering].orderBy} LIMIT ${LIMIT + 1}` }
    pageStatements.set(name, statement)
  }
  return statement
}

// `?[status=PUBLISHED][&minPageCount=100][&kind=INVOICE][&ordering=-pageCount[,name]]`
app.get('/v1/documents', async (request, reply) => {
  const ordering = request.query.ordering ?? ''
  if (ORDERINGS[ordering] === undefined) return reply.code(400).send({ title: 'Bad Request', status: 400 })
  const filters = FILTERS.filter((f) => request.query[f.param] !== undefined)
  const values = ['prod', ...filters.map((f) => f.value(request.query[f.param]))]
  const { rows } = await pool.query({ ...pageStatement(ordering, filters), values })
  const results = rows.slice(0, LIMIT).map(toDocument)
  let next = null
  if (rows.length > LIMIT) {
    // The last row's sort key, for a `WHERE (…) > (…)` on the next page.
    const last = results[LIMIT - 1]
    const cursor = Buffer.from(JSON.stringify(ORDERINGS[ordering].key.map((k) => last[k]))).toString('base64url')
    next = { cursor, url: `http://${request.host}${request.url}&cursor=${cursor}` }
  }
  return { results, paging: { limit: LIMIT, next, previous: null } }
})

const createDocument = `INSERT INTO documents (ctx, id, etag, "createdDateTime", "createdBy", "modifiedDateTime", "modifiedBy",
    name, description, "authorId", status, kind, "pageCount", "byteCount", amount, "discountPercentage", tags, pages,
    "retentionDuration", "validityInterval", "reviewSchedule", "effectiveDate", "publishedDateTime", metadata)
  VALUES ($1, $2, $3, now(), $4, now(), $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
  RETURNING ${ITEM}`
app.post('/v1/documents', async (request, reply) => {
  const d = { description: null, status: 'DRAFT', pageCount: 0, byteCount: null, amount: null, discountPercentage: null, tags: [], pages: [], retentionDuration: null, validityInterval: null, reviewSchedule: null, effectiveDate: null, publishedDateTime: null, metadata: null, ...request.body }
  const { rows } = await pool.query({
    name: 'create-document',
    text: createDocument,
    values: [
      'prod', randomUUID(), newEtag(), 'bench',
      d.name, d.description, d.authorId, d.status, d.kind, d.pageCount, d.byteCount, d.amount, d.discountPercentage, d.tags,
      JSON.stringify(d.pages), d.retentionDuration, d.validityInterval, d.reviewSchedule, d.effectiveDate, d.publishedDateTime,
      d.metadata === null ? null : JSON.stringify(d.metadata)
    ]
  })
  const doc = toDocument(rows[0])
  return reply.code(201).header('location', `/v1/documents/${doc.id}`).header('etag', doc.etag).send(doc)
})

// A merge patch of the description, applied only while the document still has the ETag the
// client sent (If-Match): the check and the change in one UPDATE.
app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'))
const patchDocument = `UPDATE documents SET description = $1, etag = $2, "modifiedDateTime" = now(), "modifiedBy" = $3
  WHERE ctx = $4 AND id = $5 AND etag = $6 RETURNING etag`
app.patch('/v1/documents/:documentId', async (request, reply) => {
  const ifMatch = request.headers['if-match']
  if (ifMatch === undefined) return reply.code(428).send({ title: 'Precondition Required', status: 428 })
  const description = request.body?.description
  if (description !== null && typeof description !== 'string') return reply.code(400).send({ title: 'Bad Request', status: 400 })
  const { rows } = await pool.query({ name: 'patch-document', text: patchDocument, values: [description, newEtag(), 'bench', 'prod', request.params.documentId, ifMatch] })
  // No row: the document is gone or changed since the client read it.
  if (rows.length === 0) return reply.code(412).send({ title: 'Precondition Failed', status: 412 })
  return reply.code(204).header('etag', rows[0].etag).send()
})

// The scanner's webhook: Standard Webhooks HMAC over the raw bytes with node:crypto, then one
// statement: the delivery id recorded unless it was already (a redelivery changes nothing), the
// document updated only when the id was recorded now. The id is recorded only for a document
// that exists, so that a delivery answered 404 can be retried.
const WEBHOOK_KEY = Buffer.from((process.env.WEBHOOK_SECRET_SCANNER ?? 'whsec_').slice('whsec_'.length), 'base64')
const recordDelivery = `WITH doc AS (
    SELECT id FROM documents WHERE ctx = $1 AND id = $2
  ), recorded AS (
    INSERT INTO webhook_deliveries (producer, delivery_id) SELECT $3, $4 FROM doc
    ON CONFLICT (producer, delivery_id) DO NOTHING RETURNING 1
  ), updated AS (
    UPDATE documents SET "pageCount" = $5, fingerprint = $6, etag = $7, "modifiedDateTime" = now(), "modifiedBy" = $3
    WHERE ctx = $1 AND id = $2 AND EXISTS (SELECT FROM recorded) RETURNING 1
  )
  SELECT 1 AS found FROM doc`

/** True when `signature` (a `webhook-signature` header) holds a v1 signature equal to `expected`. */
function signedWith (signature, expected) {
  return signature.split(' ').some((s) => {
    const sent = Buffer.from(s.slice(3), 'base64')
    return s.startsWith('v1,') && sent.length === expected.length && timingSafeEqual(sent, expected)
  })
}

app.register(async (child) => {
  // The signature covers the raw bytes: keep them.
  child.removeAllContentTypeParsers()
  child.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => { done(null, body) })
  child.post('/_webhooks/scanner/document-scanned', async (request, reply) => {
    const id = request.headers['webhook-id']
    const timestamp = request.headers['webhook-timestamp']
    const expected = createHmac('sha256', WEBHOOK_KEY).update(`${id}.${timestamp}.`).update(request.body).digest()
    if (id === undefined || !signedWith(request.headers['webhook-signature'] ?? '', expected) || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) {
      return reply.code(401).send({ title: 'Unauthorized', status: 401 })
    }
    const event = JSON.parse(request.body.toString('utf8'))
    const { rows } = await pool.query({
      name: 'record-delivery',
      text: recordDelivery,
      values: ['prod', event.documentId, 'scanner', id, event.pageCount, event.fingerprint, newEtag()]
    })
    if (rows.length === 0) return reply.code(404).send({ title: 'Not Found', status: 404 })
    return reply.code(204).send()
  })
})

await app.listen({ port: 0, host: '127.0.0.1' })
serveStats(app.server.address().port)
