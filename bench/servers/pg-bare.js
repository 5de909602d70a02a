// Baseline for the resource benchmarks: bare Fastify + a pg Pool of the same size, running
// the same SQL as the suite's repository (same text, same parameters), with no conventions,
// no auth, no validation and no representation step. Its webhook route does what the
// service's scanner webhook does, by hand: Standard Webhooks HMAC over the raw bytes with
// node:crypto (as the suite does; the `standardwebhooks` package hashes in JavaScript, which
// would slow the baseline down), then the delivery id recorded and the document updated in
// one transaction, with the service's SQL text.
import { createHmac, randomUUID, randomBytes, timingSafeEqual } from 'node:crypto'
import Fastify from 'fastify'
import pg from 'pg'
import { Repository } from '../../dist/plugins/resource/repository.js'
import { documents } from '../../dist/routes/v1/documents.js'
import { serveStats } from '../lib/harness.js'

const repo = new Repository(documents)
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, options: '-c TimeZone=UTC' })
const app = Fastify({ logger: false })

app.get('/v1/documents/:documentId', async (request, reply) => {
  const { rows } = await pool.query(repo.getSql, ['prod', request.params.documentId])
  if (rows.length === 0) return reply.code(404).send({ title: 'Not Found', status: 404 })
  return rows[0]
})

app.post('/v1/documents', async (request, reply) => {
  const body = request.body
  const values = { description: null, status: 'DRAFT', pageCount: 0, byteCount: null, amount: null, discountPercentage: null, tags: [], pages: [], retentionDuration: null, validityInterval: null, reviewSchedule: null, effectiveDate: null, publishedDateTime: null, metadata: null, fingerprint: null, ...body }
  const params = ['prod', randomUUID(), `"${randomBytes(12).toString('base64url')}"`, 'bench']
  for (const c of repo.columns) params.push(c.toParam(values[c.field]))
  const { rows } = await pool.query(repo.insertSql, params)
  return reply.code(201).header('location', `/v1/documents/${rows[0].id}`).send(rows[0])
})

const WEBHOOK_KEY = Buffer.from((process.env.WEBHOOK_SECRET_SCANNER ?? 'whsec_').slice('whsec_'.length), 'base64')
const RECORD_SQL = `INSERT INTO webhook_deliveries (producer, delivery_id) VALUES ($1, $2)
      ON CONFLICT (producer, delivery_id) DO NOTHING
      RETURNING 1 AS recorded`
const SCANNED_SQL = `UPDATE "documents" SET "pageCount" = $3, fingerprint = $4, etag = $5, "modifiedDateTime" = now(), "modifiedBy" = $6
  WHERE ctx = $1 AND id = $2 RETURNING 1 AS ok`

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
      const { rows } = await client.query(RECORD_SQL, ['scanner', id])
      if (rows.length > 0) {
        const updated = await client.query(SCANNED_SQL, ['prod', event.documentId, event.pageCount, event.fingerprint, `"${randomBytes(12).toString('base64url')}"`, 'scanner'])
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
