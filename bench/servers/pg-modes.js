// One page of rows from a pg Pool, fetched the way PG_MODE says, for bench/pg-modes.js:
//   pool-query  pool.query(text, values)                      (pg's callbacks inside)
//   callback    pool.connect(cb) + client.query(config, cb)   (store/pg.ts's single statements)
//   await       await pool.connect() + await client.query()   (the promise API)
// Answers 'gc' messages with the time spent in garbage collection so far.
import { PerformanceObserver } from 'node:perf_hooks'
import Fastify from 'fastify'
import pg from 'pg'
import { serveStats } from '../lib/harness.js'

const SQL = 'SELECT id, etag, name, description, "authorId", status, kind, "pageCount", tags, metadata FROM documents WHERE ctx = $1 ORDER BY id COLLATE "C" LIMIT 20'
const mode = process.env.PG_MODE
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
const app = Fastify({ logger: false })

let gcMs = 0
let minor = 0
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcMs += e.duration
    if (e.detail?.kind === 1) minor++
  }
}).observe({ entryTypes: ['gc'] })
process.on('message', (msg) => { if (msg.type === 'gc') process.send({ type: 'gc', gcMs, minor }) })

const fetchRows = {
  'pool-query': async () => (await pool.query(SQL, ['prod'])).rows,
  callback: () => new Promise((resolve, reject) => {
    pool.connect((err, client, release) => {
      if (err) return reject(err)
      client.query({ text: SQL, values: ['prod'] }, (failed, res) => {
        release()
        if (failed) reject(failed)
        else resolve(res.rows)
      })
    })
  }),
  await: async () => {
    const client = await pool.connect()
    try {
      return (await client.query({ text: SQL, values: ['prod'] })).rows
    } finally {
      client.release()
    }
  }
}[mode]
if (fetchRows === undefined) throw new Error(`PG_MODE must be pool-query, callback or await, got ${mode}`)

app.get('/page', async () => ({ results: await fetchRows() }))
await app.listen({ port: 0, host: '127.0.0.1' })
serveStats(app.server.address().port)
