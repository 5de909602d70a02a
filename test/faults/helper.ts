import { spawn, type ChildProcess } from 'node:child_process'
import { createHash, randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { havePostgres, startPostgres, type PostgresServer } from '../../scripts/postgres.js'
import { signToken } from '../../plugins/auth/sign.js'
import { signStandardWebhook } from '../../plugins/webhooks/standard.js'
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
// Every top-level module of the service (server.ts, app.ts, config.ts, tracing.ts…) and these folders.
const SOURCES = ['model', 'plugins', 'routes', 'schemas', 'store']
const DAY = 24 * 60 * 60 * 1000
let build: Promise<string> | undefined

/**
 * server.ts and everything it imports, transpiled once (type-free, as tap's loader does) into
 * node_modules/.cache/svc-faults/<digest of the sources>: the loader would transpile the
 * ~100 files again at every start, seconds each time on a busy 2-core runner, and these
 * tests start services often. Shared by test files running at once (built aside, renamed).
 */
export async function compiledServer (): Promise<string> {
  build ??= (async () => {
    const ts = (await import('typescript')).default
    const files: string[] = (await readdir(ROOT)).filter(f => f.endsWith('.ts'))
    for (const entry of SOURCES) {
      if (entry.endsWith('.ts')) files.push(entry)
      else for (const f of await readdir(join(ROOT, entry), { recursive: true })) if (f.endsWith('.ts')) files.push(join(entry, f))
    }
    files.sort()
    // The transform's own version too: a copy made another way is not reused.
    const hash = createHash('sha256').update(ts.version).update('entries as paths')
    const sources = await Promise.all(files.map(async f => await readFile(join(ROOT, f), 'utf8')))
    files.forEach((f, i) => hash.update(`\0${f}\0${sources[i] as string}`))
    const cache = join(ROOT, 'node_modules', '.cache', 'svc-faults')
    const out = join(cache, hash.digest('hex').slice(0, 16))
    const server = join(out, 'server.js')
    if (existsSync(server)) return server
    const tmp = `${out}.${process.pid}.tmp`
    const compilerOptions = { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true, esModuleInterop: true }
    // The service imports parts of the suite by its package name (`svc-conventions/store`): in
    // the copy, a relative path to the copied source of that entry.
    const exported = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }).exports
    const entryOf = (name: string): string | undefined => {
      const entry = exported[name === 'svc-conventions' ? '.' : `./${name.slice('svc-conventions/'.length)}`] as Record<string, string> | undefined
      return entry?.['svc-conventions-source']?.replace(/\.ts$/, '.js')
    }
    for (const [i, f] of files.entries()) {
      const js = ts.transpileModule(sources[i] as string, { compilerOptions, fileName: f }).outputText.replace(/(from\s+|import\()'(svc-conventions(?:\/[a-z-]+)?)'/g, (whole, lead: string, name: string) => {
        const target = entryOf(name)
        if (target === undefined) return whole
        const rel = relative(dirname(f), target).split(sep).join('/')
        return `${lead}'${rel.startsWith('.') ? rel : `./${rel}`}'`
      })
      await mkdir(dirname(join(tmp, f)), { recursive: true })
      await writeFile(join(tmp, f.replace(/\.ts$/, '.js')), js)
    }
    await writeFile(join(tmp, 'package.json'), '{ "type": "module" }\n')
    try {
      await rename(tmp, out)
    } catch {
      // Another test file built the same sources first.
      await rm(tmp, { recursive: true, force: true })
    }
    // Builds of older sources go after a day (never one a running test may still use).
    for (const old of await readdir(cache)) {
      const path = join(cache, old)
      if (path !== out && Date.now() - (await stat(path)).mtimeMs > DAY) await rm(path, { recursive: true, force: true })
    }
    return server
  })()
  return await build
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
 * Starts server.ts (compiled, see compiledServer) on `databaseUrl` with the contract's
 * environment variables, and resolves once /health answers 200. Killed on teardown.
 */
export async function startService (t: Teardown, databaseUrl: string, env: Record<string, string> = {}): Promise<Service> {
  const port = await freePort()
  // No coverage from the child: it runs compiled copies, which map to no source file.
  const { NODE_V8_COVERAGE: _coverage, ...inherited } = process.env
  const child = spawn(process.execPath, [await compiledServer()], {
    env: {
      ...inherited,
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
    },
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
