import t from 'tap'
import { createServer, type Socket } from 'node:net'
import pg from 'pg'
import { ConnectionTimeout, createStore, Unavailable, type Store } from '../../store/index.js'
import { connectionFailure, describeTarget, serverTarget } from '../../store/connection-errors.js'
import { havePostgres, startPostgres } from '../../scripts/postgres.js'

// A store that cannot connect says why, which server it tried and what to check, and never
// the password: against a throwaway PostgreSQL server of its own (its pg_hba.conf asks a
// password of one role and TLS of another), a closed port and a port that never answers.

const PASSWORD = 'right-horse-battery-staple'
const WRONG = 'wrong-horse-battery-staple'

async function closedPort (): Promise<number> {
  const s = createServer()
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  const { port } = s.address() as { port: number }
  await new Promise<void>((resolve) => s.close(() => resolve()))
  return port
}

/** The message of the error the store's first connection fails with. */
async function firstFailure (databaseUrl: string, connectionTimeoutMillis = 5000): Promise<Unavailable> {
  const store: Store = createStore({ databaseUrl, pool: { connectionTimeoutMillis } })
  try {
    const err = await store.ready().then(() => undefined, (e: unknown) => e)
    if (!(err instanceof Unavailable)) throw new Error(`expected Unavailable, got ${String(err)}`)
    return err
  } finally {
    await store.close()
  }
}

t.test('the server a URL names, without its password', async (t) => {
  const cases: Array<[string, string]> = [
    ['postgres://svc:secret@db.internal:6543/app', 'database "app" on db.internal:6543 as user "svc"'],
    ['postgresql://svc@db/app?sslmode=verify-full', 'database "app" on db:5432 as user "svc"'],
    ['postgres://svc@/app?host=/var/run/postgresql', 'database "app" on /var/run/postgresql:5432 as user "svc"'],
    ['postgres://svc:pw@127.0.0.1', 'database "svc" on 127.0.0.1:5432 as user "svc"'],
    ['postgres://%73vc@[::1]:5433/my%20db', 'database "my db" on [::1]:5433 as user "svc"']
  ]
  for (const [url, described] of cases) t.equal(describeTarget(serverTarget(url)), described, url)
  t.equal(serverTarget('postgres://a@h/d?sslmode=require').tls, true)
  t.equal(serverTarget('postgres://a@h/d?ssl=true').tls, true)
  t.equal(serverTarget('postgres://a@h/d?sslmode=disable').tls, false)
  t.equal(serverTarget('postgres://a@h/d').tls, false)
  t.equal(serverTarget('postgres://a:secret@h/d').password, true)
  t.equal(serverTarget('postgres://a:@h/d').password, false, 'an empty password is none')
  t.equal(createStore({ databaseUrl: 'postgres://svc:secret@db.internal/app' }).location, 'PostgreSQL database "app" on db.internal:5432 as user "svc"')
})

t.test('errors without a live server: TLS certificates, unknown causes', async (t) => {
  const target = serverTarget('postgres://svc@db:5432/app?sslmode=verify-full')
  const cases: Array<[unknown, RegExp]> = [
    [Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }), /^The TLS certificate of the PostgreSQL server at db:5432 was not accepted \(DEPTH_ZERO_SELF_SIGNED_CERT\): check the sslmode and sslrootcert in DATABASE_URL\.$/],
    [Object.assign(new Error('x'), { code: 'EHOSTUNREACH' }), /^The PostgreSQL server at db:5432 cannot be reached over the network \(EHOSTUNREACH\)/],
    [Object.assign(new Error('x'), { code: 'ECONNRESET' }), /closed the connection while it was being opened: check that db:5432 is a PostgreSQL server, and whether it requires TLS \(add \?sslmode=verify-full to DATABASE_URL, and sslrootcert=<file> for a private CA\)\.$/],
    [Object.assign(new Error('too many'), { code: '53300', severity: 'FATAL' }), /^The PostgreSQL server at db:5432 has no free connection slot/],
    [Object.assign(new Error('starting'), { code: '57P03', severity: 'FATAL' }), /is starting up or shutting down/],
    [Object.assign(new Error('other'), { code: '08P01', severity: 'FATAL' }), /refused the connection \(SQLSTATE 08P01\)/],
    [new Error('Connection terminated unexpectedly'), /closed the connection while it was being opened: check whether the server requires TLS \(add \?sslmode=verify-full to DATABASE_URL, and sslrootcert=<file> for a private CA\), and the server's log\.$/],
    [new Error('something else'), /^The PostgreSQL server at db:5432 cannot be reached: check DATABASE_URL/],
    ['not even an error', /cannot be reached: check DATABASE_URL/]
  ]
  for (const [err, message] of cases) {
    const failure = connectionFailure(err, target, 1000)
    t.match(failure, { code: 'STORE_UNAVAILABLE', cause: err, message }, String(message))
  }
  t.equal(connectionFailure(Object.assign(new Error('x'), { code: '3D000', severity: 'FATAL' }), target, 1).sqlState, '3D000', 'a SQLSTATE is kept')
  // What did not answer in time (CONNECTION_TIMEOUT in a 503), and what answered with a refusal.
  const timeouts: Array<[unknown, boolean]> = [
    [new Error('timeout exceeded when trying to connect'), true],
    [Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' }), true],
    [Object.assign(new Error('x'), { code: 'EHOSTUNREACH' }), false],
    [Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014', severity: 'ERROR' }), false],
    [new Error('something else'), false],
    ['not even an error', false]
  ]
  for (const [err, timedOut] of timeouts) t.equal(connectionFailure(err, target, 1000) instanceof ConnectionTimeout, timedOut, String(err))
})

t.test('an authentication failure for want of a password is named as such, not as a server out of reach', async (t) => {
  const saved = process.env.PGPASSWORD
  delete process.env.PGPASSWORD
  t.teardown(() => { if (saved === undefined) delete process.env.PGPASSWORD; else process.env.PGPASSWORD = saved })
  const without = serverTarget('postgres://svc@db:5432/app')
  const withOne = serverTarget('postgres://svc:secret@db:5432/app')
  t.equal(without.password, false)
  const missing = 'Authentication failed for user "svc" on the PostgreSQL server at db:5432: the server asks for a password and DATABASE_URL has none; add it to DATABASE_URL (postgres://user:password@host/database), or set PGPASSWORD.'
  const cases: Array<[string, unknown, typeof without, string, string | undefined]> = [
    // SCRAM-SHA-256 without a password: pg refuses itself, with no code.
    ['SCRAM, no password', new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string'), without, missing, undefined],
    ['SCRAM, an empty password', new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a non-empty string'), without, missing, undefined],
    // md5 or password: the server's 28P01.
    ['md5, no password', Object.assign(new Error('password authentication failed for user "svc"'), { code: '28P01', severity: 'FATAL' }), without, missing, '28P01'],
    ['a wrong password', Object.assign(new Error('password authentication failed for user "svc"'), { code: '28P01', severity: 'FATAL' }), withOne, 'Authentication failed for user "svc" on the PostgreSQL server at db:5432: check the user and password in DATABASE_URL.', '28P01']
  ]
  for (const [name, err, target, message, sqlState] of cases) {
    const failure = connectionFailure(err, target, 1000)
    t.equal(failure.message, message, name)
    t.equal(failure.sqlState, sqlState, `${name}: SQLSTATE`)
    t.notMatch(failure.message, /cannot be reached/, `${name}: not "cannot be reached"`)
  }
  process.env.PGPASSWORD = 'from-the-environment'
  t.equal(serverTarget('postgres://svc@db/app').password, true, 'PGPASSWORD counts: pg sends it')
})

t.test('against servers: each cause named, with what to check, never the password', { skip: havePostgres() ? false : 'PostgreSQL server binaries not installed' }, async (t) => {
  const server = await startPostgres({
    hba: [
      'host all svc_pw 127.0.0.1/32 scram-sha-256',
      'host all svc_plain 127.0.0.1/32 password',
      'hostssl all svc_tls 127.0.0.1/32 trust',
      'host all svc_tls 127.0.0.1/32 reject'
    ]
  })
  t.teardown(() => server.stop())
  const admin = new pg.Client({ connectionString: server.url })
  await admin.connect()
  await admin.query(`CREATE ROLE svc_pw LOGIN PASSWORD '${PASSWORD}'`)
  await admin.query(`CREATE ROLE svc_plain LOGIN PASSWORD '${PASSWORD}'`)
  await admin.query('CREATE ROLE svc_tls LOGIN')
  await admin.end()
  const at = `127.0.0.1:${server.port}`

  const right = createStore({ databaseUrl: `postgres://svc_pw:${PASSWORD}@${at}/postgres` })
  await t.resolves(right.ready(), 'the right password connects')
  await right.close()

  const closed = await closedPort()
  // A port that accepts connections and never answers: a server that hangs, or a firewall.
  const sockets: Socket[] = []
  const silent = createServer((socket) => { sockets.push(socket) })
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { for (const s of sockets) s.destroy(); silent.close() })
  const silentPort = (silent.address() as { port: number }).port

  const cases: Array<{ name: string, url: string, message: string, sqlState?: string, timeout?: number }> = [
    {
      name: 'connection refused',
      url: `postgres://postgres@127.0.0.1:${closed}/postgres`,
      message: `Nothing accepts connections at 127.0.0.1:${closed}: check that the PostgreSQL server is running, and the host and port in DATABASE_URL.`
    },
    {
      name: 'unknown database',
      url: `postgres://postgres@${at}/no_such_db`,
      message: `The database "no_such_db" does not exist on the PostgreSQL server at ${at}: check the database name in DATABASE_URL, or create it.`,
      sqlState: '3D000'
    },
    {
      name: 'authentication failed',
      url: `postgres://svc_pw:${WRONG}@${at}/postgres`,
      message: `Authentication failed for user "svc_pw" on the PostgreSQL server at ${at}: check the user and password in DATABASE_URL.`,
      sqlState: '28P01'
    },
    {
      name: 'no password, SCRAM asked',
      url: `postgres://svc_pw@${at}/postgres`,
      message: `Authentication failed for user "svc_pw" on the PostgreSQL server at ${at}: the server asks for a password and DATABASE_URL has none; add it to DATABASE_URL (postgres://user:password@host/database), or set PGPASSWORD.`
    },
    {
      name: 'no password, a clear-text password asked (the server refuses: 28P01)',
      url: `postgres://svc_plain@${at}/postgres`,
      message: `Authentication failed for user "svc_plain" on the PostgreSQL server at ${at}: the server asks for a password and DATABASE_URL has none; add it to DATABASE_URL (postgres://user:password@host/database), or set PGPASSWORD.`,
      sqlState: '28P01'
    },
    {
      name: 'TLS required',
      url: `postgres://svc_tls@${at}/postgres`,
      message: `The PostgreSQL server at ${at} does not accept user "svc_tls" for database "postgres" without TLS (no pg_hba.conf entry): if the server requires TLS, add ?sslmode=verify-full to DATABASE_URL (and sslrootcert=<file> for a private CA); else check the user, the database and the server's pg_hba.conf.`,
      sqlState: '28000'
    },
    {
      name: 'TLS asked of a server without it',
      url: `postgres://postgres@${at}/postgres?sslmode=verify-full`,
      message: `The PostgreSQL server at ${at} does not support TLS, which DATABASE_URL asks for: remove sslmode (or ssl) from DATABASE_URL, or enable TLS on the server.`
    },
    {
      name: 'timeout',
      url: `postgres://postgres@127.0.0.1:${silentPort}/postgres`,
      timeout: 300,
      message: `No connection to the PostgreSQL server at 127.0.0.1:${silentPort} within 300 ms: check that the server answers (a host that drops packets, a firewall, an overloaded server), or whether every connection of the pool was busy for that long.`
    }
  ]
  for (const c of cases) {
    const err = await firstFailure(c.url, c.timeout)
    t.equal(err.message, c.message, c.name)
    t.equal(err.sqlState, c.sqlState, `${c.name}: SQLSTATE`)
    t.notMatch(err.message, WRONG, `${c.name}: no password`)
    t.ok(err.cause !== undefined, `${c.name}: the driver's error kept as cause, for the log`)
    t.equal(err instanceof ConnectionTimeout, c.name === 'timeout', `${c.name}: a ConnectionTimeout only when no connection opened in time`)
    t.type(err, Unavailable)
  }
})
