import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../config.js'
import { createStore, quoteIdent, type Store } from '../../store/index.js'
import { countStatements, type StatementCounter } from '../support/count-statements.js'
import { admin, TEST_DATABASE_URL } from '../support/databases.js'

// "Idle is cheap": with nothing pending, the reference service wakes on the database's
// notifications and keeps only a slow safety poll, so an idle instance costs the database
// at most one statement a second. The window is wall-clock time on purpose: the rate over
// time is what is measured, by the statements sent over the window's measured length.

const WINDOW_MILLIS = 10_000
const MAX_PER_SECOND = 1
/**
 * The start's own looks for work: each lease loop (jobs, event deliveries) claims once when it
 * starts, after its LISTEN, then waits for its poll or a notification. Statements count when
 * sent, and a look sends nothing after its claim, so once both are sent the start is over.
 */
const STARTUP_LOOKS = [/^UPDATE "jobs" .*lease_owner = \$1/s, /^UPDATE "event_deliveries" .*lease_owner = \$1/s]
/** A generous bound on waiting for them: only a start that never looks meets it. */
const STARTUP_MILLIS = 30_000

/** Waits until `statements` holds every look of the start, or fails saying what was sent. */
async function startupLooks (t: Test, statements: StatementCounter): Promise<void> {
  const deadline = performance.now() + STARTUP_MILLIS
  const done = (): boolean => STARTUP_LOOKS.every(look => statements.texts().some(text => look.test(text)))
  while (!done() && performance.now() < deadline) await sleep(20)
  t.ok(done(), 'the start looked for work once per loop', { sent: statements.texts().map(text => text.replace(/\s+/g, ' ').slice(0, 60)) })
}

/** A database of its own on the server: no other test's writes (nor their notifications) reach it. */
async function serverStore (t: Test, url: string): Promise<Store> {
  const name = `idle_${process.pid}_${randomBytes(4).toString('hex')}`
  await admin(url, `CREATE DATABASE ${quoteIdent(name)}`)
  const own = new URL(url)
  own.pathname = `/${name}`
  const store = createStore({ databaseUrl: own.toString() })
  t.teardown(async () => {
    await store.close()
    await admin(url, `DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`)
  })
  return store
}

const engines: Array<{ label: string, skip: string | false, store: (t: Test) => Promise<Store> }> = [
  {
    label: 'PGlite',
    skip: false,
    store: async (t) => {
      const store = createStore({ dataDir: 'memory' })
      t.teardown(() => store.close())
      return store
    }
  },
  {
    label: 'PostgreSQL server',
    skip: TEST_DATABASE_URL === undefined ? 'PostgreSQL server not measured: set TEST_DATABASE_URL=postgres://user@host:port/db to run it' : false,
    store: async (t) => await serverStore(t, TEST_DATABASE_URL as string)
  }
]

for (const engine of engines) {
  t.test(`an idle instance sends at most ${MAX_PER_SECOND} statement a second (${engine.label})`, { skip: engine.skip }, async t => {
    const store = await engine.store(t)
    const statements = countStatements(store)
    t.teardown(() => { statements.restore() })
    const { config } = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: 'memory' })
    const app = await buildApp(config, { store })
    t.teardown(() => app.close())
    await app.ready()
    // The start's own looks for work, once, are not idling.
    await startupLooks(t, statements)
    // The count starts and ends in the same turn of the event loop as the window's measured
    // ends: whatever a loaded machine makes the window last, the statements are those sent in it.
    statements.reset()
    const opened = performance.now()
    while (performance.now() - opened < WINDOW_MILLIS) await sleep(WINDOW_MILLIS - (performance.now() - opened))
    const sent = statements.count()
    const seconds = (performance.now() - opened) / 1000
    const rate = sent / seconds
    t.comment(`${sent} statements in ${seconds.toFixed(1)} s idle: ${rate.toFixed(2)}/s`)
    // What was sent, by the start of its text, for a failure to show who polls.
    const sentBy = new Map<string, number>()
    for (const text of statements.texts()) {
      const key = text.replace(/\s+/g, ' ').slice(0, 60)
      sentBy.set(key, (sentBy.get(key) ?? 0) + 1)
    }
    t.ok(rate <= MAX_PER_SECOND, `${rate.toFixed(2)} statements/s idle`, { sent: Object.fromEntries(sentBy) })
  })
}
