import t from 'tap'
import { createPgliteDriver, HELD_MILLIS } from '../../store/pglite.js'
import type { StoreLogger } from '../../store/types.js'

// PGlite has one connection: a long transaction holds every other request. The store logs one
// that held it HELD_MILLIS or more, from its BEGIN to the end of its COMMIT or ROLLBACK, so an
// operator learns that the embedded store is what the requests wait for. Its clock is injected.

t.test('a transaction that held the embedded database long is logged, with how long', async t => {
  const warned: Array<[object, string | undefined]> = []
  const logger: StoreLogger = { info: () => {}, warn: (obj, msg) => { warned.push([obj, msg]) }, error: () => {} }
  let now = 0
  const driver = createPgliteDriver({ dataDir: 'memory', vacuumMillis: 0, logger, clock: () => now })
  t.teardown(() => driver.close())

  // The statements of the transaction "take" the time the clock moves by.
  const hold = async (millis: number, fail = false): Promise<unknown> => await driver.transaction('read committed', async (tx) => {
    await tx.query('SELECT 1')
    now += millis
    if (fail) throw new Error('the caller failed')
    return millis
  }, true)

  t.equal(await hold(HELD_MILLIS - 1), HELD_MILLIS - 1)
  t.strictSame(warned, [], 'under the threshold: nothing')
  t.equal(await hold(HELD_MILLIS + 50), HELD_MILLIS + 50)
  t.equal(warned.length, 1)
  t.match(warned[0], [{ millis: HELD_MILLIS + 50 }, /^store: a transaction held the embedded database this long; any request made meanwhile waited for it/])
  await t.rejects(hold(400, true), { message: 'the caller failed' }, 'the caller\'s error is the answer')
  t.match(warned[1], [{ millis: 400 }], 'a transaction rolled back held it too')
  // A transaction waiting for another's COMMIT holds nothing meanwhile: each is timed from its own BEGIN.
  let release: () => void = () => {}
  const first = driver.transaction('read committed', async (tx) => {
    await tx.query('SELECT 1')
    now += 200
    await new Promise<void>((resolve) => { release = resolve })
  }, true)
  const second = hold(100)
  await new Promise((resolve) => setTimeout(resolve, 20))
  release()
  await first
  t.equal(await second, 100)
  t.equal(warned.length, 2, '200 and 100 ms, after a wait of 200: neither logged')
})

t.test('without a logger, a long transaction is not logged and answers as usual', async t => {
  let now = 0
  const driver = createPgliteDriver({ dataDir: 'memory', vacuumMillis: 0, clock: () => now })
  t.teardown(() => driver.close())
  t.equal(await driver.transaction('read committed', async (tx) => {
    now += 1000
    return (await tx.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one
  }, true), 1)
})
