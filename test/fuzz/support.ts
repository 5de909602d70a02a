import http from 'node:http'
import net from 'node:net'
import { Writable } from 'node:stream'
import type { AddressInfo } from 'node:net'
import type { FastifyHttpOptions, FastifyInstance } from 'fastify'
import type { Server } from 'node:http'
import type { Test } from 'tap'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../config.js'
import type { Store } from '../../store/types.js'
import { SECRET, headers, listen } from '../resource/helper.js'
import { TEST_DATABASE_URL, pglite, postgres, type Teardown } from '../support/databases.js'

/*
 * Shared by the fuzz files: the reference service over one store per file (PGlite, or the
 * TEST_DATABASE_URL server when set), a verdict every answer must pass (conventions.md,
 * Errors: never a 5xx, always a problem body, nothing internal shown) and a raw-socket
 * client for the bytes a client library refuses to send.
 */

export interface FuzzService {
  app: FastifyInstance
  base: string
  port: number
  store: Store
  /** Every log line at level error or above: an unexpected error the service logged. */
  errors: string[]
}

export interface StartOptions {
  env?: Record<string, string>
  fastify?: FastifyHttpOptions<Server>
}

export async function startFuzzService (t: Teardown, opts: StartOptions = {}): Promise<FuzzService> {
  const db = TEST_DATABASE_URL === undefined ? pglite : postgres
  const store = await db.create(t)
  const errors: string[] = []
  const stream = new Writable({ write (chunk, _enc, done) { errors.push(String(chunk).slice(0, 800)); done() } })
  // A rate limit high enough that thousands of cases never meet a 429 instead of the rule under test.
  const { config } = loadConfig({ LOG_LEVEL: 'error', AUTH_JWT_SECRET: SECRET, DATA_DIR: 'memory', RATE_LIMIT_MAX: '10000000', ...opts.env })
  const app = await buildApp(config, { store, fastify: { logger: { level: 'error', stream }, ...opts.fastify } })
  t.teardown(() => app.close())
  const base = await listen(app)
  return { app, base, port: (app.server.address() as AddressInfo).port, store, errors }
}

export interface Reply {
  status: number
  /** Lower-case names; repeated headers joined by ', '. */
  headers: Record<string, string>
  text: string
}

/** Status counts and the problems that lack an optional member, for the report. */
export class Tally {
  readonly statuses = new Map<number, number>()
  readonly noInstance = new Map<string, number>()
  /** Answers Fastify or Node wrote outside the error handler, by status and code (see frameworkLevel). */
  readonly framework = new Map<string, number>()
  cases = 0

  get frameworkCount (): number {
    return [...this.framework.values()].reduce((a, b) => a + b, 0)
  }

  add (reply: Reply, problem: Record<string, unknown> | undefined): void {
    this.cases++
    this.statuses.set(reply.status, (this.statuses.get(reply.status) ?? 0) + 1)
    if (problem !== undefined && problem.instance === undefined) {
      const key = `${reply.status} ${String(problem.title)}`
      this.noInstance.set(key, (this.noInstance.get(key) ?? 0) + 1)
    }
  }

  summary (): string {
    const byStatus = [...this.statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`).join(' ')
    const framework = this.framework.size === 0 ? '' : `; outside the problem handler: ${[...this.framework].map(([k, n]) => `${k}×${n}`).join(' ')}`
    const missing = [...this.noInstance.values()].reduce((a, b) => a + b, 0)
    return `${this.cases} cases: ${byStatus}${framework}${missing === 0 ? '' : `; ${missing} problems without instance`}`
  }
}

// Stack frames, file paths and database wording (conventions.md, Errors rule 7).
const LEAK = /\n\s+at |\bat [^ ]+ \(|node_modules|\/work\/|SQLSTATE|violates|syntax error at|relation "|duplicate key value|pglite|\bpg_(?:catalog|class|namespace|attribute|proc|stat|toast|temp)/i

/**
 * Fastify's own answers written before any hook runs (defaultClientErrorHandler for bytes
 * Node's parser refuses, onBadUrl / onMaxParamLength for the router): a JSON body
 * `{"error",("code",)"message","statusCode"}`, not a problem. A server built with
 * `problemServerOptions` (plugins/problem/framework.ts) writes none; `report` counts them.
 */
export function frameworkLevel (reply: Reply): string | undefined {
  if (reply.headers['content-type'] !== 'application/json') return undefined
  const body = parse(reply.text)
  if (body === undefined || typeof body.error !== 'string' || typeof body.statusCode !== 'number') return undefined
  return `${reply.status} ${typeof body.code === 'string' ? body.code : String(body.message)}`
}

/**
 * The verdict, except that a Fastify framework-level answer (a body that bypassed the problem
 * handler) is counted, and `report` asserts the count is zero.
 */
export function judge (sent: Sent, reply: Reply, tally: Tally): Record<string, unknown> | undefined {
  const framework = frameworkLevel(reply)
  if (framework === undefined) return verdict(sent, reply, tally)
  if (reply.status >= 500) throw new Error(`framework-level ${framework}`)
  tally.framework.set(framework, (tally.framework.get(framework) ?? 0) + 1)
  tally.add(reply, undefined)
  return undefined
}

/**
 * Prints the case count of a property and asserts that no answer bypassed the problem handler
 * (conventions: Errors, rule 1). `instance` is optional in the convention (required only where
 * the common-errors table names it, e.g. 404), so problems without one are only counted.
 */
export function report (t: { comment: (...args: unknown[]) => void, equal: (a: unknown, b: unknown, msg: string, extra: object) => void }, label: string, tally: Tally): void {
  t.comment(`${label}: ${tally.summary()}`)
  t.equal(tally.frameworkCount, 0, 'every refusal is a problem body', { framework: Object.fromEntries(tally.framework) })
}

export interface Sent {
  method: string
  /** The X-Request-ID the client sent, when it is one the service must echo. */
  requestId?: string
}

/**
 * Throws (so fast-check reports the input) unless the answer follows the convention:
 * status below 500; every 4xx a problem+json body with title, status, requestId, string
 * type/instance when present, nothing internal; HEAD, 204 and 304 without a body.
 */
export function verdict (sent: Sent, reply: Reply, tally: Tally): Record<string, unknown> | undefined {
  const fail = (why: string): never => { throw new Error(`${why}: ${reply.status} ${JSON.stringify(reply.headers)} ${reply.text.slice(0, 400)}`) }
  if (!(reply.status >= 200 && reply.status < 500)) fail('status not in 2xx-4xx')
  if (LEAK.test(reply.text)) fail('the body shows internals')
  let problem: Record<string, unknown> | undefined
  if (sent.method === 'HEAD' || reply.status === 204 || reply.status === 304) {
    if (reply.text !== '') fail('a body where none is allowed')
  } else if (reply.status >= 400) {
    if (!String(reply.headers['content-type']).startsWith('application/problem+json')) fail('4xx without application/problem+json')
    problem = parse(reply.text) ?? fail('a problem body that is not JSON')
    if (problem.status !== reply.status) fail('problem status differs from the HTTP status')
    if (typeof problem.title !== 'string' || problem.title === '') fail('problem without a title')
    if (typeof problem.requestId !== 'string' || problem.requestId === '') fail('problem without a requestId')
    // A 431 is Node's parser refusing headers it has not finished reading: no X-Request-ID to honour.
    if (sent.requestId !== undefined && reply.status !== 431 && problem.requestId !== sent.requestId) fail('requestId is not the X-Request-ID sent')
    for (const member of ['type', 'instance', 'detail'] as const) {
      if (problem[member] !== undefined && typeof problem[member] !== 'string') fail(`problem ${member} is not a string`)
    }
    if (problem.context !== undefined && !(Array.isArray(problem.context) && problem.context.every((c: any) => typeof c?.message === 'string'))) fail('context items without a message')
  } else if (reply.text !== '' && !String(reply.headers['content-type']).startsWith('application/json')) {
    fail('a 2xx body that is not JSON')
  }
  tally.add(reply, problem)
  return problem
}

function parse (text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined
  } catch {
    return undefined
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 })

/**
 * One request over a keep-alive agent (node:http: Buffer bodies and latin-1 header values go
 * out as they are, so callers pass UTF-8 text already encoded as latin-1 characters).
 */
export async function send (base: string, method: string, path: string, hdrs: Record<string, string>, body?: string | Buffer): Promise<Reply> {
  try {
    return await once(base + path, method, hdrs, body, agent)
  } catch (err) {
    // Fastify's client-error answers destroy the socket without `Connection: close` (see the
    // report), so a pooled socket may be dead when reused: retry once on a fresh one, as Node's
    // docs advise for `request.reusedSocket`. A fresh connection that fails is a real failure.
    if ((err as { reused?: boolean }).reused !== true) throw err
    return await once(base + path, method, hdrs, body, false)
  }
}

async function once (url: string, method: string, hdrs: Record<string, string>, body: string | Buffer | undefined, via: http.Agent | false): Promise<Reply> {
  return await new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: hdrs, agent: via }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('error', reject)
      res.on('end', () => {
        const out: Record<string, string> = {}
        for (const [name, value] of Object.entries(res.headers)) out[name] = Array.isArray(value) ? value.join(', ') : String(value)
        resolve({ status: res.statusCode ?? 0, headers: out, text: Buffer.concat(chunks).toString('utf8') })
      })
    })
    req.on('error', (err) => { reject(Object.assign(err, { reused: req.reusedSocket })) })
    req.end(body)
  })
}

/** The convention's headers with a valid token, plus JSON content type when a body goes out. */
export function good (extra: Record<string, string> = {}): Record<string, string> {
  return headers(extra)
}

/** The last subtest of a fuzz file: a normal request still succeeds, and nothing unexpected was logged. */
export function afterwards (t: Test, base: string, errors: unknown[]): void {
  t.test('afterwards', async (t) => {
    t.equal((await send(base, 'GET', '/v1/authors?limit=1', good())).status, 200, 'a normal request still succeeds')
    t.strictSame(errors, [], 'no unexpected error was logged')
  })
}

export interface RawOptions {
  /** Gives up (and reports `timedOut`) after this long; the server may hold a silent socket. */
  timeoutMs?: number
  /** Writes each chunk separately, waiting this long between them (a slow client). */
  delayMs?: number
}

export interface RawReply {
  /** Undefined when the server closed or timed out without answering. */
  reply?: Reply
  raw: string
  closed: boolean
  timedOut: boolean
}

/** Sends bytes as they are over a fresh TCP connection and reads the answer until close. */
export async function raw (port: number, chunks: Array<string | Buffer>, opts: RawOptions = {}): Promise<RawReply> {
  return await new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    const received: Buffer[] = []
    let done = false
    const finish = (closed: boolean, timedOut: boolean): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      const text = Buffer.concat(received).toString('latin1')
      resolve({ reply: parseResponse(text), raw: text, closed, timedOut })
    }
    const timer = setTimeout(() => finish(false, true), opts.timeoutMs ?? 5000)
    socket.on('data', (data) => {
      received.push(data)
      // Enough to judge once a whole response is in, even if the server keeps the socket.
      if (parseResponse(Buffer.concat(received).toString('latin1'), true) !== undefined) finish(false, false)
    })
    socket.on('error', () => finish(true, false))
    socket.on('close', () => finish(true, false))
    socket.on('connect', () => { write().catch(() => finish(true, false)) })
    async function write (): Promise<void> {
      for (const chunk of chunks) {
        if (done) return
        socket.write(chunk)
        if (opts.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, opts.delayMs))
      }
    }
  })
}

/** Parses one HTTP/1.1 response; with `complete`, only when its whole body has arrived. */
export function parseResponse (text: string, complete = false): Reply | undefined {
  // An interim 100 Continue (Expect: 100-continue) precedes the real answer.
  while (text.startsWith('HTTP/1.1 100 ')) text = text.slice(text.indexOf('\r\n\r\n') + 4)
  const end = text.indexOf('\r\n\r\n')
  if (end < 0) return undefined
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n')
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)
  if (match === null) return undefined
  const hdrs: Record<string, string> = {}
  for (const line of lines) {
    const at = line.indexOf(':')
    const name = line.slice(0, at).trim().toLowerCase()
    const value = line.slice(at + 1).trim()
    hdrs[name] = hdrs[name] === undefined ? value : `${hdrs[name]}, ${value}`
  }
  let body = text.slice(end + 4)
  const length = hdrs['content-length']
  if (length !== undefined) {
    if (complete && body.length < Number(length)) return undefined
    body = body.slice(0, Number(length))
  } else if (complete && Number(match[1]) !== 204 && Number(match[1]) !== 304) {
    return undefined
  }
  return { status: Number(match[1]), headers: hdrs, text: Buffer.from(body, 'latin1').toString('utf8') }
}
