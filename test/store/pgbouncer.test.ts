import t from 'tap'
import { spawn, spawnSync, execFileSync } from 'node:child_process'
import { chownSync, mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { createStore, migrate, StatementTimeout } from '../../store/index.js'
import { TEST_DATABASE_URL } from '../support/databases.js'

/*
 * PgBouncer in transaction-pooling mode in front of the throwaway PostgreSQL server: each
 * transaction (and each statement outside one) may run on another server connection, so the
 * store must name no prepared statements and send no start-up parameters (pool.pgbouncer).
 * `.ci/run` installs Debian's pgbouncer package; elsewhere the test says why it skips.
 */

const haveBouncer = spawnSync('pgbouncer', ['--version']).status === 0
const SKIP = TEST_DATABASE_URL === undefined
  ? 'PgBouncer not tested: no PostgreSQL server (set TEST_DATABASE_URL, as CI and scripts/with-postgres.js do)'
  : !haveBouncer ? 'PgBouncer not tested: the pgbouncer binary is missing (apt-get install pgbouncer; .ci/run does)' : false

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => { const { port } = s.address() as { port: number }; s.close(() => resolve(port)) })
    s.once('error', reject)
  })
}

t.test('through PgBouncer in transaction mode', { skip: SKIP }, async (t) => {
  const server = new URL(TEST_DATABASE_URL as string)
  const admin = new pg.Client({ connectionString: server.href })
  await admin.connect()
  t.teardown(() => admin.end())
  // A database and a role of their own; the role's time zone is not UTC, so a statement that
  // depended on the session's would show it.
  const name = `svc_bouncer_${randomBytes(4).toString('hex')}`
  await admin.query(`CREATE ROLE ${name} LOGIN SUPERUSER`)
  await admin.query(`ALTER ROLE ${name} SET TimeZone = 'Pacific/Chatham'`)
  await admin.query(`CREATE DATABASE ${name} OWNER ${name}`)
  t.teardown(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.query(`DROP ROLE IF EXISTS ${name}`)
  })

  const dir = mkdtempSync(join(tmpdir(), 'svc-bouncer-'))
  const port = await freePort()
  writeFileSync(join(dir, 'userlist.txt'), `"${name}" ""\n`)
  writeFileSync(join(dir, 'pgbouncer.ini'), [
    '[databases]',
    `${name} = host=${server.hostname} port=${server.port} dbname=${name} user=${name}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'userlist.txt')}`,
    'pool_mode = transaction',
    // Few server connections for many clients: transactions of one client land on different ones.
    'default_pool_size = 2',
    'max_client_conn = 100',
    `logfile = ${join(dir, 'pgbouncer.log')}`,
    `pidfile = ${join(dir, 'pgbouncer.pid')}`
  ].join('\n') + '\n')
  // PgBouncer refuses to run as root: it switches to the postgres user the server runs as.
  const root = process.getuid?.() === 0
  if (root) {
    chmodSync(dir, 0o755)
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
    chownSync(dir, uid, Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()))
  }
  const bouncer = spawn('pgbouncer', [...(root ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  bouncer.stdout.on('data', (c) => { output += String(c) })
  bouncer.stderr.on('data', (c) => { output += String(c) })
  t.teardown(() => {
    bouncer.kill('SIGINT')
    rmSync(dir, { recursive: true, force: true })
  })
  const url = `postgres://${name}@127.0.0.1:${port}/${name}`
  // Up once it accepts a connection.
  for (let i = 0; ; i++) {
    const probe = new pg.Client({ connectionString: url })
    try {
      await probe.connect()
      await probe.end()
      break
    } catch (err) {
      await probe.end().catch(() => {})
      if (i > 200 || bouncer.exitCode !== null) throw new Error(`pgbouncer did not start: ${output}`, { cause: err })
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  t.test('without the option the store cannot work through it', async (t) => {
    const plain = createStore({ databaseUrl: url, pool: { max: 2, connectionTimeoutMillis: 3000 } })
    t.teardown(() => plain.close())
    // PgBouncer refuses the start-up parameters (TimeZone, statement_timeout) the store sends.
    await t.rejects(plain.query('SELECT 1'), { name: 'Unavailable' })
  })

  t.test('with pool.pgbouncer: repeated statements, transactions, savepoints and the timeout', async (t) => {
    // The pool's default timeouts for the work through PgBouncer, which a loaded machine could
    // make miss a short one; a second store below for the statements that test the timeout.
    const store = createStore({ databaseUrl: url, pool: { pgbouncer: true, max: 6 } })
    t.teardown(() => store.close())
    await migrate(store, [{ id: 'bounced-1', sql: 'CREATE TABLE notes (id int PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), body text)' }])
    // The same text again and again, and a caller's named statement: a prepared statement
    // would be missing on the next server connection ("prepared statement … does not exist").
    await Promise.all(Array.from({ length: 40 }, async (_, i) => {
      await store.query('INSERT INTO notes (id, body) VALUES ($1, $2)', [i, `n${i}`], { name: 'insert-note' })
      const { rows } = await store.query<{ n: number }>('SELECT count(*)::int AS n FROM notes WHERE id <= $1', [i])
      t.ok((rows[0]?.n ?? 0) >= 1)
    }))
    t.strictSame((await store.query('SELECT count(*)::int AS n FROM notes')).rows, [{ n: 40 }])
    const zone = await store.transaction(async (tx) => {
      await tx.savepoint(async (sp) => { await sp.query('UPDATE notes SET body = $1 WHERE id = 1', ['changed']) })
      return (await tx.query<{ tz: string, body: string }>("SELECT current_setting('TimeZone') AS tz, (SELECT body FROM notes WHERE id = 1) AS body")).rows[0]
    })
    t.strictSame(zone, { tz: 'UTC', body: 'changed' }, 'each transaction runs in UTC whatever the role says')
    // Outside a transaction the role's time zone applies: the text still names the instant in UTC.
    const { rows } = await store.query<{ at: string }>('SELECT at FROM notes WHERE id = 0')
    t.match(rows[0]?.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    t.ok(Math.abs(Date.parse(rows[0]?.at as string) - Date.now()) < 600_000, 'timestamps read back as the same instants')
    const timed = createStore({ databaseUrl: url, pool: { pgbouncer: true, max: 2, statementTimeoutMillis: 500 } })
    t.teardown(() => timed.close())
    const slow = await timed.transaction(async (tx) => await tx.query('SELECT pg_sleep(5)')).then(() => null, (err: unknown) => err)
    t.type(slow, StatementTimeout, 'the server cancels a transaction\'s statement at the timeout')
    t.equal((slow as StatementTimeout).sqlState, '57014')
    const untimed = await timed.transaction(async (tx) => await tx.query('SELECT pg_sleep(0.7) AS slept'), { statementTimeout: false })
    t.equal(untimed.rowCount, 1, 'an untimed transaction (a migration) may take longer')
  })

  t.test('searchPath needs a session of its own: refused with the option', async (t) => {
    t.throws(() => createStore({ databaseUrl: url, searchPath: 'x', pool: { pgbouncer: true } }), /searchPath cannot be used with pool.pgbouncer/)
    t.throws(() => createStore({ databaseUrl: url, pool: { pgbouncer: 'yes' as never } }), /pool.pgbouncer must be a boolean, got yes/)
  })
})
