// Baseline for the collection benchmark: bare Fastify + a pg Pool of the service's size,
// running THE SAME SQL as the service for one collection query. The statement is built once,
// at startup, with the suite's own pieces (filter model, field map, compiler, select list),
// so its text and parameters are those the service sends for that query string; each
// request only runs it and returns the rows as JSON: no conventions, auth, validation,
// query parsing, representation, envelope or ETag.
//
// BENCH_QUERY is the query string without `limit` (default 20), e.g.
// `kind=INVOICE&filter=pageCount=ge=100;status==PUBLISHED&ordering=-pageCount`.
// BENCH_PREPARED=1 names the statement, so each connection prepares it once, as the service
// does with a text that repeats (store/prepared.ts): the contrast that isolates that gain.
import Fastify from 'fastify'
import pg from 'pg'
import { documents } from '../../dist/routes/v1/documents.js'
import { statementOf } from '../lib/statement.js'
import { serveStats } from '../lib/harness.js'

const statement = statementOf(documents, process.env.BENCH_QUERY ?? '')
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, options: '-c TimeZone=UTC' })
const app = Fastify({ logger: false })

const query = process.env.BENCH_PREPARED === '1'
  ? { name: 'bench_filtered', text: statement.text, values: statement.params }
  : null

app.get('/v1/documents', async () => {
  const { rows } = query === null ? await pool.query(statement.text, statement.params) : await pool.query(query)
  return { results: rows }
})

await app.listen({ port: 0, host: '127.0.0.1' })
serveStats(app.server.address().port)
