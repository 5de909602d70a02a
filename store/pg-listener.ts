import pg from 'pg'
import { quoteIdent } from './quote.js'
import type { StoreLogger } from './types.js'

// Full-jitter backoff between attempts to connect again, capped: instances cut off together
// (a failover) do not all come back in step.
const RETRY_BASE_MS = 100
const RETRY_CAP_MS = 10_000

export interface PgListenerOptions {
  /** The pool's connection string and start-up settings: the listening session is like the others. */
  client: pg.ClientConfig
  logger: StoreLogger
}

/**
 * LISTEN on a PostgreSQL server, for `Store.listen`. A notification reaches only the session
 * that listens, and a pooled connection goes back to the pool after each statement: this is
 * one connection of its own, outside the pool, opened at the first `listen` and closed by
 * `close()` (or once nothing listens). After an error, or a close by the server, it connects
 * again with backoff, LISTENs on every channel again and calls every listener once, for the
 * notifications sent while it was down.
 */
export class PgListener {
  readonly #opts: PgListenerOptions
  /** The listeners of each channel, as wanted now. */
  readonly #channels = new Map<string, Set<() => void>>()
  #client: pg.Client | null = null
  /** The channels LISTENed on by the current connection. */
  readonly #listening = new Set<string>()
  /** Connecting, LISTEN and UNLISTEN, one after another. */
  #work: Promise<void> = Promise.resolve()
  #retry: NodeJS.Timeout | null = null
  #failures = 0
  #closed = false

  constructor (opts: PgListenerOptions) {
    this.#opts = opts
  }

  /** Resolves once the channel is listened on, or once connecting failed (logged; it is tried again). */
  async listen (channel: string, onNotify: () => void): Promise<() => Promise<void>> {
    // A function of its own: the same onNotify listening twice is stopped once each.
    const listener = (): void => { onNotify() }
    let set = this.#channels.get(channel)
    if (set === undefined) {
      set = new Set()
      this.#channels.set(channel, set)
    }
    set.add(listener)
    await this.#sync()
    return async () => {
      const current = this.#channels.get(channel)
      if (current?.delete(listener) !== true) return
      if (current.size === 0) this.#channels.delete(channel)
      await this.#sync()
    }
  }

  async close (): Promise<void> {
    this.#closed = true
    if (this.#retry !== null) clearTimeout(this.#retry)
    this.#retry = null
    await this.#work
    await this.#disconnect()
  }

  /**
   * Brings the connection's LISTENs in line with the channels wanted: connects first when
   * there is none, disconnects when nothing is wanted. Never rejects: a failure is logged and
   * the connection is made again later, which then does this.
   */
  #sync (): Promise<void> {
    this.#work = this.#work.then(async () => {
      if (this.#closed || this.#retry !== null) return
      if (this.#channels.size === 0) {
        await this.#disconnect()
        return
      }
      let client = this.#client
      try {
        client ??= await this.#connect()
        for (const channel of this.#channels.keys()) {
          if (this.#listening.has(channel)) continue
          await client.query(`LISTEN ${quoteIdent(channel)}`)
          this.#listening.add(channel)
        }
        for (const channel of this.#listening) {
          if (this.#channels.has(channel)) continue
          await client.query(`UNLISTEN ${quoteIdent(channel)}`)
          this.#listening.delete(channel)
        }
      } catch (err) {
        this.#lost(client ?? this.#client, err)
      }
    })
    return this.#work
  }

  async #connect (): Promise<pg.Client> {
    const client = new pg.Client(this.#opts.client)
    this.#client = client
    // Without listeners, a connection lost while idle would crash the process.
    client.on('error', (err) => { this.#lost(client, err) })
    client.on('end', () => { this.#lost(client, new Error('The server closed the connection.')) })
    client.on('notification', (msg) => {
      for (const listener of this.#channels.get(msg.channel) ?? []) listener()
    })
    await client.connect()
    return client
  }

  async #disconnect (): Promise<void> {
    const client = this.#client
    if (client === null) return
    this.#client = null
    this.#listening.clear()
    await client.end().catch(() => {})
  }

  /** The connection failed (once per connection; later reports of the same one are ignored): connects again later. */
  #lost (client: pg.Client | null, err: unknown): void {
    if (client === null || client !== this.#client) return
    this.#client = null
    this.#listening.clear()
    client.end().catch(() => {})
    if (this.#closed) return
    const wait = Math.round(Math.random() * Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** this.#failures))
    this.#failures++
    this.#opts.logger.warn({ err, retryInMillis: wait }, 'store: the LISTEN connection failed; connecting again')
    this.#retry = setTimeout(() => {
      this.#retry = null
      this.#sync().then(() => {
        if (this.#client === null) return
        this.#failures = 0
        this.#opts.logger.info({}, 'store: the LISTEN connection is back; listening again')
        // Whatever was notified while it was down is looked for now.
        for (const set of this.#channels.values()) for (const listener of set) listener()
      })
    }, wait)
    this.#retry.unref()
  }
}
