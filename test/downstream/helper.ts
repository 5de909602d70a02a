import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { createDownstream, type DownstreamClient, type DownstreamOptions } from '../../plugins/downstream/index.js'

/** A request the downstream server received. */
export interface Received {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}

export type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void

/**
 * A real HTTP server on 127.0.0.1, port 0, standing for the other service: `handler` answers
 * the n-th request (from 1); every request is recorded with its body.
 */
export async function downstreamServer (t: Test, handler: Handler): Promise<{ url: string, received: Received[], sockets: () => number }> {
  const received: Received[] = []
  let open = 0
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      received.push({ method: req.method as string, url: req.url as string, headers: req.headers, body: Buffer.concat(chunks).toString() })
      handler(req, res, received.length)
    })
  })
  server.on('connection', (socket) => {
    open++
    socket.on('close', () => { open-- })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, received, sockets: () => open }
}

/** Answers JSON. */
export function json (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
}

export const SERVICE = { id: '0f8b2c4e-6a1d-4e3b-9c5f-7d2e1a0b3c4d', name: 'orders' }
export const USER_AGENT = { product: 'orders-service', version: 2 }

/** A client with a fake sleep that records the waits and a fixed random; closed at teardown. */
export function client (t: Test, options: Partial<DownstreamOptions> = {}): { client: DownstreamClient, sleeps: number[] } {
  const sleeps: number[] = []
  const c = createDownstream({
    service: SERVICE,
    userAgent: USER_AGENT,
    sleep: async (ms) => { sleeps.push(ms) },
    random: () => 0.5,
    ...options
  })
  t.teardown(() => c.close())
  return { client: c, sleeps }
}

/**
 * Timers that fire only when the test says so, for a client's `after`: `fire(ms)` runs the
 * first armed one of `ms` (and throws when none is armed); `armed()` lists those neither fired
 * nor cancelled.
 */
export function manualTimers (): { after: (ms: number, fn: () => void) => () => void, fire: (ms: number) => void, armed: () => number[] } {
  const timers: Array<{ ms: number, fn: () => void, done: boolean }> = []
  return {
    after: (ms, fn) => {
      const timer = { ms, fn, done: false }
      timers.push(timer)
      return () => { timer.done = true }
    },
    fire: (ms) => {
      const timer = timers.find((x) => !x.done && x.ms === ms)
      if (timer === undefined) throw new Error(`no timer of ${ms} ms is armed`)
      timer.done = true
      timer.fn()
    },
    armed: () => timers.filter((x) => !x.done).map((x) => x.ms)
  }
}
