// The one way the check talks to a service: a bounded HTTP client. Every request counts against
// the budget, at most `concurrency` are in flight, redirects are never followed off the base
// URL's origin, the token goes to that origin only, and it never appears in what it records.
import { connect as netConnect, type Socket } from 'node:net'
import { connect as tlsConnect, rootCertificates } from 'node:tls'
import type { Dispatcher } from 'undici'
import { CheckError, type Answer, type Exchange, type SentRequest } from './types.js'

/** The budget is spent: the rule that asked is not checked. */
export class BudgetSpent extends Error {
  constructor (max: number) {
    super(`the request budget (--max-requests ${max}) is spent`)
    this.name = 'BudgetSpent'
  }
}

/** A probe that got no whole answer (none in time, or one that broke off): the rule that sent it fails. */
export class NoAnswer extends Error {
  readonly request: SentRequest
  constructor (request: SentRequest, message: string) {
    super(message)
    this.name = 'NoAnswer'
    this.request = request
  }
}

export interface Probe {
  method?: string
  /** Relative to the base URL, beginning with `/` (`/v1/authors?limit=2`), or a complete URL. */
  path: string
  headers?: Record<string, string | undefined>
  body?: string
  /** Send the token (default true when there is one); 'limited' sends the limited token instead. */
  auth?: boolean | 'limited'
  /** Our User-Agent unless given; `null` sends none. */
  userAgent?: string | null
  /** Follow redirects on the base URL's origin (at most 3); never off it. Default false. */
  follow?: boolean
  /** A POST that may create an entity: sent only when the budget can also pay for its deletion. */
  creates?: boolean
  /** Paid from the requests held back for deletions (`reserve`), while there are any. */
  reserved?: boolean
}

/** The requests the deletion of an entity takes: a GET for its ETag (If-Match), the DELETE. */
export const DELETION_REQUESTS = 2

export interface ClientOptions {
  baseUrl: string
  token?: string | undefined
  /** A token the service accepts without some permission (the 403 probe). */
  limitedToken?: string | undefined
  maxRequests: number
  concurrency: number
  timeoutMillis: number
  ca?: string | undefined
  userAgent: string
}

// Bodies are read up to this size, then the stream is closed: the rest says nothing a rule needs.
const MAX_BODY = 1024 * 1024

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EPIPE', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'])
const TLS = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|HOSTNAME|ALTNAME|EPROTO/

function codeOf (err: unknown): string {
  const e = err as { code?: unknown, cause?: { code?: unknown } }
  return String(e.code ?? e.cause?.code ?? '')
}

/** The CAs a TLS connection trusts: Node's own roots, and the one given besides them. */
export function trustedCas (ca: string | undefined): string[] | undefined {
  return ca === undefined ? undefined : [...rootCertificates, ca]
}

export class HttpClient {
  readonly base: URL
  readonly exchanges: Exchange[] = []
  private readonly opts: ClientOptions
  private sent = 0
  /** Requests held back from the budget for the deletion of what the check created. */
  private reservedCount = 0
  private active = 0
  private readonly waiting: Array<() => void> = []
  private dispatcher: Dispatcher | null = null
  private undici: typeof import('undici') | null = null

  constructor (opts: ClientOptions) {
    this.opts = opts
    this.base = new URL(opts.baseUrl.endsWith('/') ? opts.baseUrl.slice(0, -1) : opts.baseUrl)
  }

  /** How many requests were sent. */
  get count (): number { return this.sent }

  /** The base URL's path prefix (empty for a service at the root). */
  get prefix (): string { return this.base.pathname === '/' ? '' : this.base.pathname.replace(/\/$/, '') }

  /**
   * The absolute URL of a path relative to the base, or of a complete URL. The path is joined to
   * the origin as text: resolved as a reference, `//host/…` would be another host's URL.
   */
  url (path: string): URL {
    if (/^https?:\/\//i.test(path)) return new URL(path)
    if (!path.startsWith('/')) throw new CheckError('usage', `not a path on the service: ${JSON.stringify(path)} (a path begins with /)`)
    return new URL(`${this.base.origin}${this.prefix}${path}`)
  }

  /** Whether a URL is on the base URL's origin: the same scheme, host and port (default ports applied). */
  sameOrigin (url: URL): boolean {
    return url.origin === this.base.origin
  }

  /** Holds `n` requests of the budget back: only a probe sent `reserved` spends them. */
  reserve (n: number): void {
    this.reservedCount += n
  }

  /** The tokens replaced wherever they would show. */
  redact (text: string): string {
    let shown = text
    for (const [token, name] of [[this.opts.token, '<token>'], [this.opts.limitedToken, '<limited token>']] as const) {
      if (token !== undefined && token !== '') shown = shown.split(token).join(name)
    }
    return shown
  }

  async close (): Promise<void> {
    await this.dispatcher?.close()
  }

  private async slot (probe: Pick<Probe, 'creates' | 'reserved'> = {}): Promise<void> {
    if (probe.reserved === true && this.reservedCount > 0) this.reservedCount--
    else if (this.sent + this.reservedCount + 1 + (probe.creates === true ? DELETION_REQUESTS : 0) > this.opts.maxRequests) throw new BudgetSpent(this.opts.maxRequests)
    this.sent++
    while (this.active >= this.opts.concurrency) await new Promise<void>(resolve => { this.waiting.push(resolve) })
    this.active++
  }

  private release (): void {
    this.active--
    this.waiting.shift()?.()
  }

  private async agent (): Promise<{ undici: typeof import('undici'), dispatcher: Dispatcher }> {
    // Loaded on the first request: importing the check costs nothing until it runs.
    this.undici ??= await import('undici')
    this.dispatcher ??= new this.undici.Agent({
      connections: this.opts.concurrency,
      connect: { timeout: this.opts.timeoutMillis, ...(this.opts.ca === undefined ? {} : { ca: trustedCas(this.opts.ca) }) },
      // Each request's own deadline bounds the headers and the body together.
      headersTimeout: 0,
      bodyTimeout: 0
    })
    return { undici: this.undici, dispatcher: this.dispatcher }
  }

  private headersOf (probe: Probe, url: URL): Record<string, string> {
    const headers: Record<string, string> = {}
    const ua = probe.userAgent === undefined ? this.opts.userAgent : probe.userAgent
    if (ua !== null) headers['user-agent'] = ua
    headers.accept = 'application/json'
    // A token goes to the base URL's origin only: never to another host, nor in clear text to
    // the same host over http when the base is https.
    const auth = this.sameOrigin(url) ? probe.auth ?? true : false
    const token = auth === 'limited' ? this.opts.limitedToken : auth ? this.opts.token : undefined
    if (token !== undefined) headers.authorization = `Bearer ${token}`
    for (const [name, value] of Object.entries(probe.headers ?? {})) {
      if (value === undefined) delete headers[name.toLowerCase()]
      else headers[name.toLowerCase()] = value
    }
    return headers
  }

  private shown (method: string, url: URL, headers: Record<string, string>, body?: string, version?: string): SentRequest {
    const shownHeaders: Record<string, string> = {}
    for (const [name, value] of Object.entries(headers)) shownHeaders[name] = this.redact(value)
    const path = url.origin === this.base.origin ? url.pathname + url.search : url.href
    return { method, path, headers: shownHeaders, ...(body === undefined ? {} : { body: this.redact(body) }), ...(version === undefined ? {} : { version }) }
  }

  private answer (status: number, rawHeaders: Record<string, string | string[] | undefined>, text: string): Answer {
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(rawHeaders)) {
      if (value !== undefined) headers[name.toLowerCase()] = this.redact(Array.isArray(value) ? value.join(', ') : value)
    }
    const shownText = this.redact(text)
    let json: unknown
    try { json = shownText === '' ? undefined : JSON.parse(shownText) } catch { json = undefined }
    return { status, headers, text: shownText, json }
  }

  /** One request; redirects only on the base's origin, when asked. */
  async send (probe: Probe): Promise<Exchange> {
    let url = this.url(probe.path)
    let method = probe.method ?? 'GET'
    let body = probe.body
    for (let hop = 0; ; hop++) {
      const exchange = await this.once(method, url, probe, body)
      const location = exchange.response.headers.location
      if (!(probe.follow ?? false) || hop >= 3 || exchange.response.status < 300 || exchange.response.status > 399 || location === undefined) return exchange
      const next = new URL(location, url)
      // Never off the base URL's origin: a redirect elsewhere is answered as it is.
      if (!this.sameOrigin(next)) return exchange
      url = next
      if (exchange.response.status === 303) { method = 'GET'; body = undefined }
    }
  }

  private async once (method: string, url: URL, probe: Probe, body: string | undefined): Promise<Exchange> {
    const headers = this.headersOf(probe, url)
    const request = this.shown(method, url, headers, body)
    await this.slot(probe)
    let timer: NodeJS.Timeout | undefined
    try {
      const { undici, dispatcher } = await this.agent()
      // The time limit is the whole answer's, body included: a body that never ends is cut off.
      const deadline = new AbortController()
      timer = setTimeout(() => { deadline.abort() }, this.opts.timeoutMillis)
      let res: Dispatcher.ResponseData
      try {
        res = await undici.request(url, { method: method as Dispatcher.HttpMethod, headers, body: body ?? null, dispatcher, signal: deadline.signal })
      } catch (err) {
        throw deadline.signal.aborted ? new NoAnswer(request, `no answer within ${this.opts.timeoutMillis} ms`) : this.failure(err, request)
      }
      let text: string
      try {
        text = await this.read(res.body)
      } catch (err) {
        throw this.brokenOff(err, request, deadline.signal.aborted)
      }
      const exchange = { request, response: this.answer(res.statusCode, res.headers, text) }
      this.exchanges.push(exchange)
      return exchange
    } finally {
      clearTimeout(timer)
      this.release()
    }
  }

  private async read (body: AsyncIterable<Buffer | Uint8Array>): Promise<string> {
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of body) {
      chunks.push(Buffer.from(chunk))
      size += chunk.length
      // Leaving the loop destroys the stream: the rest is never read.
      if (size >= MAX_BODY) break
    }
    return Buffer.concat(chunks).subarray(0, MAX_BODY).toString('utf8')
  }

  /**
   * A body that did not come whole: the headers did, so the service was reached, and the rule
   * that sent the request fails (the document's reader makes it exit code 2).
   */
  private brokenOff (err: unknown, request: SentRequest, late: boolean): NoAnswer {
    return new NoAnswer(request, late ? `the answer did not end within ${this.opts.timeoutMillis} ms` : `the answer broke off after its headers (${(err as Error).message})`)
  }

  private failure (err: unknown, request: SentRequest): Error {
    const code = codeOf(err)
    const target = `${this.base.origin}${this.prefix}`
    if (TLS.test(code) || /certificate|tls|ssl/i.test((err as Error).message)) {
      return new CheckError('tls', `TLS error talking to ${target}: ${code === '' ? (err as Error).message : code} (a certificate the check does not trust? --ca <file> adds a CA)`)
    }
    if (UNREACHABLE.has(code) || code === '') {
      return new CheckError('unreachable', `cannot reach ${target}: ${code === '' ? (err as Error).message : code}`)
    }
    return new CheckError('unreachable', `cannot talk to ${target}: ${code}`)
  }

  /**
   * A request in HTTP/1.0, written on a socket of its own: no client library sends that
   * version any more. The answer is read until the service closes or the time is up.
   */
  async sendHttp10 (path: string): Promise<Exchange> {
    const url = this.url(path)
    const headers = this.headersOf({ path }, url)
    headers.host = url.host
    const request = this.shown('GET', url, headers, undefined, 'HTTP/1.0')
    await this.slot()
    try {
      const raw = await new Promise<string>((resolve, reject) => {
        const port = Number(url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : url.port)
        const host = url.hostname.replace(/^\[|\]$/g, '')
        const socket: Socket = url.protocol === 'https:'
          ? tlsConnect({ host, port, servername: host, ...(this.opts.ca === undefined ? {} : { ca: trustedCas(this.opts.ca) }) })
          : netConnect({ host, port })
        const chunks: Buffer[] = []
        let size = 0
        const done = (): void => { clearTimeout(timer); socket.destroy(); resolve(Buffer.concat(chunks).toString('latin1')) }
        const timer = setTimeout(done, this.opts.timeoutMillis)
        socket.on(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
          socket.write(`GET ${url.pathname}${url.search} HTTP/1.0\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`)
        })
        socket.on('data', (chunk: Buffer) => {
          chunks.push(chunk)
          size += chunk.length
          if (size >= MAX_BODY) done()
        })
        socket.on('end', done)
        socket.on('error', (err) => { clearTimeout(timer); if (chunks.length > 0) resolve(Buffer.concat(chunks).toString('latin1')); else reject(err) })
      }).catch((err: unknown) => { throw this.failure(err, request) })
      const exchange = { request, response: parseRaw(raw, this) }
      this.exchanges.push(exchange)
      return exchange
    } finally {
      this.release()
    }
  }

  /** For parseRaw: an answer from parts, redacted. */
  answerOf (status: number, headers: Record<string, string>, text: string): Answer {
    return this.answer(status, headers, text)
  }
}

/** An HTTP/1.x answer as bytes: status, headers, body (status 0 when nothing came back). */
function parseRaw (raw: string, client: HttpClient): Answer {
  const end = raw.indexOf('\r\n\r\n')
  const head = end === -1 ? raw : raw.slice(0, end)
  const [statusLine = '', ...lines] = head.split('\r\n')
  const m = /^HTTP\/\d\.\d (\d{3})/.exec(statusLine)
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const i = line.indexOf(':')
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim()
  }
  const body = end === -1 ? '' : Buffer.from(raw.slice(end + 4), 'latin1').toString('utf8')
  return client.answerOf(m === null ? 0 : Number(m[1]), headers, m === null ? raw.slice(0, 200) : body)
}
