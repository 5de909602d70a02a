// The floor of outgoing events: the least work any transactional outbox could do to deliver one
// event per POST, written by hand with none of the suite's code. A trigger writes each new
// document's event to a bare table in the POST's own transaction (lib/floor-outbox.js). This
// process takes them in batches, one statement claiming and ending each batch (DELETE … FOR
// UPDATE SKIP LOCKED … RETURNING), and posts each, signed as Standard Webhooks asks and with the
// headers the contract lists, to the subscriber over kept-alive connections. It records no
// outcome and retries nothing: an event whose delivery fails is lost. A measure, not a design.
//
// DATABASE_URL: where the table is; BENCH_FLOOR_TARGET: the subscriber's URL. Idle until told
// `{ type: 'floor', on: true }` over IPC; told `{ on: false }`, it delivers what is left in the
// table, then answers `{ type: 'floor-idle' }`.
import { createHmac } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { Agent, request } from 'undici'
import { FLOOR_SECRET, FLOOR_TABLE } from '../lib/floor-outbox.js'
import { serveStats } from '../lib/harness.js'

/** The deliveries of a batch: as many as the suite's dispatcher holds at most by default. */
const BATCH = 128
/** After a batch that was not full, events gather meanwhile: by default as long as the suite's dispatcher lets them. */
const GATHER_MILLIS = Number(process.env.BENCH_FLOOR_GATHER ?? 50)
/** Connections to the subscriber: as many as the suite opens to one subscription by default. */
const CONNECTIONS = 32
const SECRET = Buffer.from(FLOOR_SECRET, 'base64')

const target = new URL(process.env.BENCH_FLOOR_TARGET)
const db = new pg.Client({ connectionString: process.env.DATABASE_URL })
await db.connect()
const agent = new Agent({ connections: CONNECTIONS })
const claim = {
  name: 'floor-claim',
  text: `DELETE FROM ${FLOOR_TABLE} WHERE id IN (SELECT id FROM ${FLOOR_TABLE} ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING id, payload`,
  values: [BATCH]
}
const constant = {
  'content-type': 'application/json',
  'user-agent': 'bench-floor/1 (events)',
  'svc-service': 'id=7d8bb5a2-6f2a-4f0e-9f0e-1e2b3c4d5e6f; name=bench-floor'
}

let on = false

async function deliver ({ id, payload }) {
  const webhookId = `msg_${id}`
  const timestamp = String(Math.floor(Date.now() / 1000))
  const signature = createHmac('sha256', SECRET).update(`${webhookId}.${timestamp}.${payload}`).digest('base64')
  const res = await request(target, {
    method: 'POST',
    dispatcher: agent,
    headers: { ...constant, 'x-request-id': `floor-${id}`, 'webhook-id': webhookId, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` },
    body: payload
  })
  await res.body.dump()
  if (res.statusCode < 200 || res.statusCode > 299) throw new Error(`floor: the subscriber answered ${res.statusCode}`)
}

let running = null
/** Delivers while `on`; once off, until the table is empty. */
async function run () {
  for (;;) {
    const { rows } = await db.query(claim)
    if (rows.length > 0) await Promise.all(rows.map(deliver))
    if (!on && rows.length === 0) return
    if (on && rows.length < BATCH) await sleep(GATHER_MILLIS)
  }
}

process.on('message', (msg) => {
  if (msg.type !== 'floor') return
  on = msg.on
  if (on) {
    running ??= run().catch((err) => {
      console.error(err)
      process.exit(1)
    }).finally(() => { running = null })
  } else {
    // The writer has stopped: what is left is delivered, then the benchmark is told.
    Promise.resolve(running).then(() => process.send({ type: 'floor-idle' }))
  }
})

serveStats(0, async () => {
  on = false
  await running
  await agent.close()
  await db.end()
})
