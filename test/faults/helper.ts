import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import pg from 'pg'
import { havePostgres, startPostgres, type PostgresServer } from '../../scripts/postgres.js'
import { signToken } from '../../plugins/auth/sign.js'
import { signStandardWebhook } from '../../plugins/webhooks/standard.js'
import { toolEnv } from '../support/child-env.js'
import { admin } from '../support/databases.js'

/**
 * Fault tests run the reference service as `npm start` does, in child processes that can be
 * killed, against a throwaway PostgreSQL server of their own that can be stopped.
 */

// Small imports only (no app, no plugin suite): this process just sends load.
export const SECRET = 'a-test-secret-for-the-fault-tests-0123456789'
export const WEBHOOK_SECRET = 'whsec_' + Buffer.from('fault-tests-webhook-secret-0123').toString('base64')
const TOKEN = signToken({ secret: SECRET, sub: 'fault-tests', scope: ['authors:read', 'authors:write', 'documents:read', 'documents:write'], expiresIn: '1h' })

/** The headers every request of the convention carries. */
export function headers (extra: Record<string, string> = {}): Record<string, string> {
  return { 'user-agent': 'fault-tests/1 (tap)', authorization: `Bearer ${TOKEN}`, ...extra }
}

const SHARED = process.env.TEST_DATABASE_URL

/** tap's `skip` for every fault test: a reason when there is no server to run them on. */
export const SKIP: string | false = SHARED !== undefined || havePostgres()
  ? false
  : 'PostgreSQL server binaries not installed (Debian\'s postgresql package) and no TEST_DATABASE_URL; CI has both'

/** tap's `skip` for a test that stops its server: a reason when the binaries are missing. */
export const SKIP_OWN_SERVER: string | false = havePostgres()
  ? false
  : 'PostgreSQL server binaries not installed (Debian\'s postgresql package); CI has them'

export interface Teardown { teardown: (fn: () => unknown) => void }

/** A throwaway server of the test's own, which it may stop and start: stopped and removed on teardown. */
export async function startDatabase (t: Teardown): Promise<PostgresServer> {
  const server = await startPostgres()
  t.teardown(() => { server.stop() })
  return server
}

/**
 * An empty database of the test's own, dropped on teardown: on the run's server
 * (TEST_DATABASE_URL, as CI sets it) when there is one, which spares an initdb per test;
 * else on a throwaway server. For tests that kill services, not the database.
 */
export async function freshDatabase (t: Teardown): Promise<{ url: string }> {
  if (SHARED === undefined) return await startDatabase(t)
  const name = `faults_${process.pid}_${randomUUID().replaceAll('-', '').slice(0, 12)}`
  await admin(SHARED, `CREATE DATABASE ${name}`)
  // FORCE: a killed service's connections may not have been noticed as gone yet.
  t.teardown(async () => { await admin(SHARED, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) })
  const url = new URL(SHARED)
  url.pathname = `/${name}`
  return { url: url.toString() }
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
let built: Promise<string> | undefined

/**
 * The service as `npm start` runs it: dist/server.js, built first when a source is newer than
 * the last build (scripts/build.js --if-needed, once per test file). CI's install builds it, so
 * there the check alone runs.
 */
export async function builtServer (): Promise<string> {
  built ??= promisify(execFile)(process.execPath, [join(ROOT, 'scripts', 'build.js'), '--if-needed'], { cwd: ROOT, env: toolEnv() })
    .then(() => join(ROOT, 'dist', 'server.js'))
  return await built
}

export interface Service {
  base: string
  child: ChildProcess
  /** Settles when the process ends: its exit code and signal. */
  exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
  /** Everything the process wrote so far (warn level and above). */
  output: () => string
}

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => { resolve(port) })
    })
    s.once('error', reject)
  })
}

/**
 * Starts the built service (builtServer) on `databaseUrl` with the contract's
 * environment variables, and resolves once /health answers 200. Killed on teardown.
 */
export async function startService (t: Teardown, databaseUrl: string, env: Record<string, string> = {}): Promise<Service> {
  const port = await freePort()
  // With no coverage: the fault tests count none (the plugins' in-process tests do).
  const child = spawn(process.execPath, [await builtServer()], {
    env: toolEnv({
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      AUTH_JWT_SECRET: SECRET,
      WEBHOOK_SECRET_SCANNER: WEBHOOK_SECRET,
      CURSOR_SECRET: 'a-cursor-secret-for-the-fault-tests',
      // Webhooks are HTTPS only: the test client is the trusted proxy that says so.
      TRUST_PROXY: '127.0.0.1',
      // Load bursts must meet the faults, not the rate limit.
      RATE_LIMIT_MAX: '1000000',
      LOG_LEVEL: 'warn',
      ...env
    }),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  const collect = (chunk: Buffer): void => { out += String(chunk) }
  child.stdout?.on('data', collect)
  child.stderr?.on('data', collect)
  const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => { resolve({ code, signal }) })
  })
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL')
      await exited
    }
  })
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 30_000
  while (true) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`server.ts exited before it was ready:\n${out}`)
    if (Date.now() > deadline) throw new Error(`server.ts not ready after 30 s:\n${out}`)
    try {
      if ((await fetch(`${base}/health`)).status === 200) break
    } catch {}
    await sleep(50)
  }
  return { base, child, exited, output: () => out }
}

/** Waits for the process to end, failing after `ms`. */
export async function exitOf (service: Service, ms = 15_000): Promise<{ code: number | null, signal: NodeJS.Signals | null }> {
  const timer = sleep(ms, null, { ref: false }).then(() => { throw new Error(`the service did not exit within ${ms} ms:\n${service.output().slice(-2000)}`) })
  return await Promise.race([service.exited, timer])
}

export interface Answer {
  status: number
  headers: Headers
  text: string
  body: any
}

/** One request with the convention's headers (bearer token, User-Agent); never throws for a status. */
export async function call (base: string, method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Answer> {
  const h = headers(extra)
  if (body !== undefined) h['content-type'] ??= 'application/json'
  const res = await fetch(base + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  let parsed: unknown = null
  try { parsed = text === '' ? null : JSON.parse(text) } catch {}
  return { status: res.status, headers: res.headers, text, body: parsed }
}

/** A scanner delivery signed with the service's secret, over "HTTPS" as the trusted proxy says. */
export async function deliver (base: string, id: string, payload: unknown): Promise<Answer> {
  const raw = JSON.stringify(payload)
  const ts = Math.floor(Date.now() / 1000)
  const res = await fetch(`${base}/_webhooks/scanner/document-scanned`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-forwarded-proto': 'https',
      'webhook-id': id,
      'webhook-timestamp': String(ts),
      'webhook-signature': signStandardWebhook(WEBHOOK_SECRET, id, ts, raw)
    },
    body: raw
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, body: text === '' ? null : JSON.parse(text) }
}

/** Runs one statement on a connection of its own (checks by SQL, fixtures). */
export async function sql<R extends pg.QueryResultRow = any> (url: string, text: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<R>(text, params)).rows
  } finally {
    await client.end()
  }
}

/** An author to hang documents on. */
export async function author (base: string): Promise<string> {
  const res = await call(base, 'POST', '/v1/authors', { name: 'Fault Tests', email: 'faults@example.com' })
  if (res.status !== 201) throw new Error(`could not create an author: ${res.status} ${res.text}`)
  return res.body.id as string
}

/** A unique document name with a recognisable prefix. */
export function unique (prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`
}

/**
 * `workers` loops calling `fn` until `stop()`; every call's result (or thrown error) is kept.
 * Returns the results and a promise for the end of the loops.
 */
export function load<R> (workers: number, fn: (worker: number, i: number) => Promise<R>): { results: Array<R | Error>, stop: () => Promise<void> } {
  const results: Array<R | Error> = []
  const state = { running: true }
  const loops = Array.from({ length: workers }, async (_, w) => {
    for (let i = 0; state.running; i++) {
      try {
        results.push(await fn(w, i))
      } catch (err) {
        results.push(err as Error)
      }
    }
  })
  return {
    results,
    stop: async () => {
      state.running = false
      await Promise.all(loops)
    }
  }
}

/** Polls `check` until it holds, failing after `ms`. */
export async function eventually (check: () => Promise<boolean>, ms: number, what: string): Promise<number> {
  const start = Date.now()
  while (Date.now() - start < ms) {
    try {
      if (await check()) return Date.now() - start
    } catch {}
    await sleep(100)
  }
  throw new Error(`${what}: not within ${ms} ms`)
}
