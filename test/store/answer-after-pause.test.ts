import t from 'tap'
import { once } from 'node:events'
import { Worker } from 'node:worker_threads'
import { createStore, StatementTimeout } from '../../store/index.js'
import { TEST_DATABASE_URL } from '../support/databases.js'

// The store gives up on a statement the server does not answer (statement timeout + a second).
// Node runs expired timers before it reads sockets, so after the process was held up past that
// moment, an answer already waiting in the socket must still win over the give-up: otherwise a
// statement that ran (a write that committed) is reported as failed, and a sound connection
// dropped. The answer is held in a proxy (a worker thread) until this thread is blocked, then
// let through; the thread stays blocked past the store's deadline, so both are due at once.

const STATEMENT_TIMEOUT = 100
// store/pg.ts: the statement timeout plus at least one second.
const GIVE_UP = STATEMENT_TIMEOUT + 1000

// A TCP proxy to PostgreSQL that can hold the server's next answer (up to its ReadyForQuery),
// let it through, or drop it; it counts the connections it was given.
const PROXY = `
const net = require('node:net')
const { parentPort, workerData } = require('node:worker_threads')
const forwarded = new Int32Array(workerData.forwarded)
let connections = 0
let hold = false
let held = []
let holder = null
const ready = (bytes) => bytes.length >= 6 && bytes[bytes.length - 6] === 0x5a && bytes.readInt32BE(bytes.length - 5) === 5
parentPort.on('message', (msg) => {
  if (msg === 'hold') {
    hold = true
    parentPort.postMessage({ holding: true })
  } else if (msg === 'release') {
    hold = false
    holder.write(Buffer.concat(held), () => { Atomics.store(forwarded, 0, 1); Atomics.notify(forwarded, 0) })
    held = []
  } else if (msg === 'drop') {
    hold = false
    held = []
  } else if (msg === 'count') {
    parentPort.postMessage({ connections })
  }
})
const server = net.createServer((client) => {
  connections++
  const upstream = net.connect(workerData.port, workerData.host)
  client.on('data', (chunk) => upstream.write(chunk))
  upstream.on('data', (chunk) => {
    if (!hold) return client.write(chunk)
    held.push(chunk)
    holder = client
    if (ready(Buffer.concat(held))) parentPort.postMessage({ held: true })
  })
  client.on('error', () => upstream.destroy())
  upstream.on('error', () => client.destroy())
  client.on('close', () => upstream.destroy())
  upstream.on('close', () => client.destroy())
})
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }))
`

/** Blocks this thread for `ms` milliseconds: no timer, socket or promise of it runs meanwhile. */
function block (ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.max(0, ms))
}

t.test('an answer that came in while the process was held up wins over the store giving up', { skip: TEST_DATABASE_URL === undefined ? 'needs TEST_DATABASE_URL' : false }, async t => {
  const target = new URL(TEST_DATABASE_URL as string)
  const forwarded = new Int32Array(new SharedArrayBuffer(4))
  const proxy = new Worker(PROXY, { eval: true, workerData: { host: target.hostname, port: Number(target.port || 5432), forwarded: forwarded.buffer } })
  t.teardown(async () => { await proxy.terminate() })
  const ask = async <K extends string>(msg: string, key: K): Promise<Record<K, unknown>> => {
    const answer = new Promise<Record<K, unknown>>((resolve) => {
      const on = (m: Record<string, unknown>): void => { if (key in m) { proxy.off('message', on); resolve(m as Record<K, unknown>) } }
      proxy.on('message', on)
    })
    if (msg !== '') proxy.postMessage(msg)
    return await answer
  }
  const [{ port }] = await once(proxy, 'message') as [{ port: number }]
  const url = new URL(target)
  url.host = `127.0.0.1:${port}`
  const store = createStore({ databaseUrl: url.toString(), pool: { max: 1, statementTimeoutMillis: STATEMENT_TIMEOUT } })
  t.teardown(() => store.close())
  await store.query('SELECT 1')

  t.test('held past the deadline with the answer unread: the answer is taken, the connection kept', async t => {
    await ask('hold', 'holding')
    const answer = store.query<{ n: number }>('SELECT 2 AS n')
    await ask('', 'held')
    // The store's timer started before the answer left the server, so it is due by then.
    const due = performance.now() + GIVE_UP
    // From the loop's check phase: the next thing the loop does is run its expired timers.
    await new Promise(resolve => setImmediate(resolve))
    Atomics.store(forwarded, 0, 0)
    proxy.postMessage('release')
    // 'not-equal': written before this thread began to wait.
    t.not(Atomics.wait(forwarded, 0, 0, 30_000), 'timed-out', 'the proxy wrote the answer to the store\'s socket')
    block(due + 50 - performance.now())
    const { rows } = await answer
    t.strictSame(rows, [{ n: 2 }])
    t.strictSame((await store.query<{ n: number }>('SELECT 3 AS n')).rows, [{ n: 3 }])
    t.strictSame(await ask('count', 'connections'), { connections: 1 }, 'the same connection served on')
  })

  t.test('no answer at all: the store still gives up, and drops the connection', async t => {
    await ask('hold', 'holding')
    const answer = store.query('SELECT 4 AS n')
    await ask('', 'held')
    const err = await answer.then(() => null, (e: unknown) => e)
    t.type(err, StatementTimeout)
    t.match((err as Error).message, `did not answer within ${GIVE_UP} ms`)
    proxy.postMessage('drop')
    t.strictSame((await store.query<{ n: number }>('SELECT 5 AS n')).rows, [{ n: 5 }])
    t.strictSame(await ask('count', 'connections'), { connections: 2 }, 'a new connection for the next statement')
  })
})
