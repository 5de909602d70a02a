// What preparing a statement saves PostgreSQL: the statement the service runs for the filtered
// page (bench/lib/statement.js), and its read of one document by id (the repository's), on one
// connection, sent unnamed (parsed, analysed and
// planned every run, as a hand-written `pool.query(text, values)` does), named under
// PostgreSQL's default `plan_cache_mode` (the store's way since it prepares repeated texts), and
// named with `force_custom_plan` (planned every run, for its values). Reports the backend's CPU
// per statement from /proc (Linux). Modes alternate over BENCH_ROUNDS rounds of BENCH_STATEMENTS
// statements, one at a time; BENCH_DATABASE_URL or a throwaway server; BENCH_DOCUMENTS documents.
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { documents } from '../dist/routes/v1/documents.js'
import { selectList } from '../dist/plugins/resource/representation.js'
import { benchDatabase } from './lib/admin.js'
import { statementOf } from './lib/statement.js'
import { fmt, median } from './lib/harness.js'
import { seed } from './seed.js'
import { FILTERED } from './collection.js'

const COUNT = Number(process.env.BENCH_DOCUMENTS ?? 100_000)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const STATEMENTS = Number(process.env.BENCH_STATEMENTS ?? 3000)
const TICK_MICROS = 1e6 / 100 // USER_HZ
const DATABASE = 'svc_bench_pg_prepared'

const modes = {
  unnamed: { options: '', name: undefined },
  'prepared, plan_cache_mode auto': { options: '', name: 'bench_page' },
  'prepared, force_custom_plan': { options: ' -c plan_cache_mode=force_custom_plan', name: 'bench_page' }
}

/** utime + stime of one process, in µs. */
function cpuOf (pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) * TICK_MICROS
}

/** µs of backend CPU per statement, on a fresh connection, after a warm-up; `statement(i)` gives the i-th. */
async function measureMode (url, statement, mode) {
  const client = new pg.Client({ connectionString: url, options: `-c TimeZone=UTC${mode.options}` })
  await client.connect()
  try {
    const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid
    const config = (i) => {
      const { text, params } = statement(i)
      return { text, values: params, rowMode: 'array', ...(mode.name === undefined ? {} : { name: mode.name }) }
    }
    for (let i = 0; i < 300; i++) await client.query(config(i))
    const before = cpuOf(pid)
    for (let i = 0; i < STATEMENTS; i++) await client.query(config(i))
    return (cpuOf(pid) - before) / STATEMENTS
  } finally {
    await client.end()
  }
}

const database = await benchDatabase(DATABASE, process.env.BENCH_DATABASE_URL)
try {
  // The service makes the schema; the seed fills it.
  const { buildApp } = await import('../dist/app.js')
  const { loadConfig } = await import('../dist/config.js')
  const app = await buildApp(loadConfig({ ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'silent' }).config)
  await app.ready()
  await seed({ url: database.url, count: COUNT, log: (line) => process.stderr.write(line + '\n') })
  await app.close()
  const page = statementOf(documents, FILTERED)
  // The repository's item read (plugins/resource/repository.ts), over ids spread through the table.
  const db = new pg.Client({ connectionString: database.url })
  await db.connect()
  const ids = (await db.query('SELECT id FROM documents WHERE ctx = \'prod\' ORDER BY md5(id) LIMIT 500')).rows.map((r) => r.id)
  await db.end()
  const item = `SELECT ${selectList(documents)} FROM "documents" WHERE ctx = $1 AND id = $2`
  const statements = {
    'filtered page': () => page,
    'item by id': (i) => ({ text: item, params: ['prod', ids[i % ids.length]] })
  }
  console.log(`\none connection, ${rounds} rounds of ${fmt(STATEMENTS)} statements per mode, modes alternating, ${fmt(COUNT)} documents; the page is \`${FILTERED}\`\n`)
  console.log('| statement | mode | PostgreSQL backend CPU µs per statement, median | rounds |')
  console.log('| --- | --- | ---: | --- |')
  for (const [what, statement] of Object.entries(statements)) {
    const results = Object.fromEntries(Object.keys(modes).map((m) => [m, []]))
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 === 0 ? Object.keys(modes) : Object.keys(modes).reverse()
      for (const name of order) results[name].push(await measureMode(database.url, statement, modes[name]))
      process.stderr.write(`  ${what}, round ${i + 1}: ${Object.entries(results).map(([n, rs]) => `${n} ${fmt(rs[i], 0)}`).join(', ')} µs\n`)
    }
    for (const [name, rs] of Object.entries(results)) console.log(`| ${what} | ${name} | ${fmt(median(rs), 0)} | ${rs.map((r) => fmt(r, 0)).join(', ')} |`)
  }
} finally {
  await database.close()
}
