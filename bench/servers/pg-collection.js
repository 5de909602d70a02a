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
import { fieldMapOf } from '../../dist/plugins/resource/collection.js'
import { selectList } from '../../dist/plugins/resource/representation.js'
import { buildFilter, splitFilterParams } from '../../dist/plugins/query/filter.js'
import { orderingResolver } from '../../dist/plugins/query/ordering.js'
import { compileSql, selectStatement } from '../../dist/store/sql-query.js'
import { quoteIdent } from '../../dist/store/quote.js'
import { serveStats } from '../lib/harness.js'

/** The statement registerCollections (plugins/resource/collection.ts) runs for `queryString` in execution context `ctx`. */
function statementOf (def, queryString, ctx = 'prod') {
  const fields = fieldMapOf(def)
  const params = new URLSearchParams(queryString)
  // Filter parameters in code-point order, as the query plugin reads them (read.ts).
  const filters = {}
  for (const name of [...new Set(params.keys())].sort()) {
    if (name === 'ordering' || name === 'limit') continue
    const values = params.getAll(name)
    filters[name] = values.length === 1 ? values[0] : values
  }
  const query = {
    filter: buildFilter(splitFilterParams(filters, fields), fields),
    ordering: orderingResolver(fields)(params.getAll('ordering')),
    paging: { kind: 'cursor', limit: Number(params.get('limit') ?? 20) }
  }
  const summary = selectList({ ...def, columns: def.columns.filter(c => !def.summaryOmit.includes(c.field)) })
  const sql = compileSql(query, fields, { paramStart: 2 })
  return selectStatement(sql, { select: summary, from: `${quoteIdent(def.table)} t`, where: 't.ctx = $1', params: [ctx] })
}

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
