// Baseline for the resource benchmarks: bare Fastify + a pg Pool of the same size, running
// the same SQL as the suite's repository (same text, same parameters), with no conventions,
// no auth, no validation and no representation step.
import { randomUUID, randomBytes } from 'node:crypto'
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

await app.listen({ port: 0, host: '127.0.0.1' })
serveStats(app.server.address().port)
