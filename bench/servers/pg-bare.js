// The baseline of every case on PostgreSQL: bare Fastify + a pg Pool of the service's size,
// written by hand as a person would without the suite, on the reference service's tables
// (table `documents`, one column per field, text collated "C"). Plain columns are selected
// and formatted in JavaScript (date-times as ISO strings; pg gives numeric and bigint as
// text already); the answers have the service's shape, `ref` and `authorRef` included. No
// conventions, auth, validation, ETag or signed cursor: that is the suite's work, measured.
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

app.get('/v1/documents/:documentId', async (request, reply) => {
  const { rows } = await pool.query(`SELECT ${ITEM} FROM documents WHERE ctx = $1 AND id = $2`, ['prod', request.params.documentId])
  if (rows.length === 0) return reply.code(404).send({ title: 'Not Found', status: 404 })
  return reply.header('etag', rows[0].etag).send(toDocument(rows[0]))
})

// A document's file, as the files plugin stores it (table documents_content): the bytes and
// their type, read in one statement and sent as they are.
app.get('/v1/documents/:documentId/content', async (request, reply) => {
  const { rows } = await pool.query('SELECT media_type, etag, bytes FROM documents_content WHERE ctx = $1 AND id = $2', ['prod', request.params.documentId])
  if (rows.length === 0) return reply.code(404).send({ title: 'Not Found', status: 404 })
  return reply.header('content-type', rows[0].media_type).header('etag', rows[0].etag).send(rows[0].bytes)
})

// The page's orderings this route offers; the id last, so the order is total.
const ORDER_BY = { '-pageCount': '"pageCount" DESC, id', '-pageCount,name': '"pageCount" DESC, name, id' }
const LIMIT = 20

// `?status=PUBLISHED&minPageCount=100[&kind=INVOICE]&ordering=-pageCount[,name]`
app.get('/v1/documents', async (request, reply) => {
  const { status, minPageCount, kind, ordering } = request.query
  const orderBy = ORDER_BY[ordering]
  if (orderBy === undefined || status === undefined || minPageCount === undefined) return reply.code(400).send({ title: 'Bad Request', status: 400 })
  const params = ['prod', status, Number(minPageCount)]
  // Documents are soft-deleted: pages leave the deleted ones out, as the service's do.
  let where = 'ctx = $1 AND status = $2 AND "pageCount" >= $3 AND "deletedDateTime" IS NULL'
  if (kind !== undefined) {
    params.push(kind)
    where += ' AND kind = $4'
  }
  const { rows } = await pool.query(`SELECT ${SUMMARY} FROM documents WHERE ${where} ORDER BY ${orderBy} LIMIT ${LIMIT + 1}`, params)
  const results = rows.slice(0, LIMIT).map(toDocument)
  let next = null
  if (rows.length > LIMIT) {
    // The last row's sort key, for a `WHERE (…) > (…)` on the next page.
    const last = results[LIMIT - 1]
    const cursor = Buffer.from(JSON.stringify([last.pageCount, last.name, last.id])).toString('base64url')
    next = { cursor, url: `http://${request.host}${request.url}&cursor=${cursor}` }
  }
  return { results, paging: { limit: LIMIT, next, previous: null } }
})

app.post('/v1/documents', async (request, reply) => {
  const d = { description: null, status: 'DRAFT', pageCount: 0, byteCount: null, amount: null, discountPercentage: null, tags: [], pages: [], retentionDuration: null, validityInterval: null, reviewSchedule: null, effectiveDate: null, publishedDateTime: null, metadata: null, ...request.body }
  const { rows } = await pool.query(`INSERT INTO documents (ctx, id, etag, "createdDateTime", "createdBy", "modifiedDateTime", "modifiedBy",
      name, description, "authorId", status, kind, "pageCount", "byteCount", amount, "discountPercentage", tags, pages,
      "retentionDuration", "validityInterval", "reviewSchedule", "effectiveDate", "publishedDateTime", metadata)
    VALUES ($1, $2, $3, now(), $4, now(), $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
    RETURNING ${ITEM}`, [
    'prod', randomUUID(), `"${randomBytes(12).toString('base64url')}"`, 'bench',
    d.name, d.description, d.authorId, d.status, d.kind, d.pageCount, d.byteCount, d.amount, d.discountPercentage, d.tags,
    JSON.stringify(d.pages), d.retentionDuration, d.validityInterval, d.reviewSchedule, d.effectiveDate, d.publishedDateTime,
    d.metadata === null ? null : JSON.stringify(d.metadata)
  ])
  const doc = toDocument(rows[0])
  return reply.code(201).header('location', `/v1/documents/${doc.id}`).header('etag', doc.etag).send(doc)
})

// The scanner's webhook: Standard Webhooks HMAC over the raw bytes with node:crypto, then the
// delivery id recorded and the document updated in one transaction.
const WEBHOOK_KEY = Buffer.from((process.env.WEBHOOK_SECRET_SCANNER ?? 'whsec_').slice('whsec_'.length), 'base64')

app.register(async (child) => {
  // The signature covers the raw bytes: keep them.
  child.removeAllContentTypeParsers()
  child.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => { done(null, body) })
  child.post('/_webhooks/scanner/document-scanned', async (request, reply) => {
    const id = request.headers['webhook-id']
    const timestamp = request.headers['webhook-timestamp']
    const signature = request.headers['webhook-signature'] ?? ''
    const expected = createHmac('sha256', WEBHOOK_KEY).update(`${id}.${timestamp}.`).update(request.body).digest()
    const valid = signature.split(' ').some((s) => {
      const sent = Buffer.from(s.slice(3), 'base64')
      return s.startsWith('v1,') && sent.length === expected.length && timingSafeEqual(sent, expected)
    })
    if (id === undefined || !valid || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return reply.code(401).send({ title: 'Unauthorized', status: 401 })
    const event = JSON.parse(request.body.toString('utf8'))
    const client = await pool.connect()
    try {
      await client.query('BEGIN')
      const { rows } = await client.query(`INSERT INTO webhook_deliveries (producer, delivery_id) VALUES ($1, $2)
        ON CONFLICT (producer, delivery_id) DO NOTHING RETURNING 1 AS recorded`, ['scanner', id])
      if (rows.length > 0) {
        const updated = await client.query(`UPDATE documents SET "pageCount" = $3, fingerprint = $4, etag = $5, "modifiedDateTime" = now(), "modifiedBy" = $6
          WHERE ctx = $1 AND id = $2 RETURNING 1 AS ok`, ['prod', event.documentId, event.pageCount, event.fingerprint, `"${randomBytes(12).toString('base64url')}"`, 'scanner'])
        if (updated.rows.length === 0) {
          await client.query('ROLLBACK')
          return reply.code(404).send({ title: 'Not Found', status: 404 })
        }
      }
      await client.query('COMMIT')
    } catch (err) {
      await client.query('ROLLBACK')
      throw err
    } finally {
      client.release()
    }
    return reply.code(204).send()
  })
})

await app.listen({ port: 0, host: '127.0.0.1' })
serveStats(app.server.address().port)
