import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { SerializationFailure, UniqueViolation, type Tx } from '../../store/index.js'
import { databases } from '../support/databases.js'

interface Latch { wait: Promise<void>, open: () => void }
function latch (): Latch {
  let open = (): void => {}
  const wait = new Promise<void>((resolve) => { open = resolve })
  return { wait, open }
}

/** Resolves once `n` callers have arrived: makes transactions overlap on purpose. */
function barrier (n: number): () => Promise<void> {
  let arrived = 0
  const all = latch()
  return async () => {
    if (++arrived === n) all.open()
    await all.wait
  }
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async (t) => {
    const store = await db.create(t)

    t.test('parallel read-modify-write under SELECT … FOR UPDATE ends exact', async (t) => {
      await store.exec('CREATE TABLE cc_counter (id int PRIMARY KEY, n int NOT NULL); INSERT INTO cc_counter VALUES (1, 0)')
      const n = 25
      await Promise.all(Array.from({ length: n }, async () => await store.transaction(async (tx) => {
        const { rows } = await tx.query<{ n: number }>('SELECT n FROM cc_counter WHERE id = $1 FOR UPDATE', [1])
        await sleep(1) // widen the window between read and write
        await tx.query('UPDATE cc_counter SET n = $1 WHERE id = $2', [(rows[0]?.n ?? 0) + 1, 1])
      })))
      t.strictSame((await store.query('SELECT n FROM cc_counter')).rows, [{ n }])
    })

    t.test('parallel inserts of one unique key: exactly one wins', async (t) => {
      await store.exec('CREATE TABLE cc_names (id serial PRIMARY KEY, name text NOT NULL CONSTRAINT cc_names_name_key UNIQUE)')
      const results = await Promise.allSettled(Array.from({ length: 10 }, async (_, i) => await store.transaction(async (tx) => {
        await tx.query('INSERT INTO cc_names (name) VALUES ($1)', ['same'])
        await tx.query('SELECT pg_sleep(0.02)') // hold the row so the others collide with it
        return i
      })))
      const won = results.filter((r) => r.status === 'fulfilled')
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      t.equal(won.length, 1)
      t.equal(lost.length, 9)
      for (const r of lost) t.match(r.reason, { constructor: UniqueViolation, constraint: 'cc_names_name_key' })
      t.strictSame((await store.query('SELECT count(*) AS n FROM cc_names')).rows, [{ n: 1 }])
    })

    t.test('a query issued during a transaction neither sees its data nor runs inside it', async (t) => {
      await store.exec('CREATE TABLE cc_vis (id int PRIMARY KEY)')
      const inside = latch()
      const release = latch()
      const events: string[] = []
      const txDone = store.transaction(async (tx) => {
        await tx.query('INSERT INTO cc_vis VALUES (1)')
        inside.open()
        await release.wait
        throw new Error('roll back')
      }).catch((e: unknown) => e).finally(() => { events.push('transaction ended') })
      await inside.wait
      const outside = (async () => {
        await store.query('INSERT INTO cc_vis VALUES (2)')
        return (await store.query('SELECT id FROM cc_vis ORDER BY id')).rows
      })().finally(() => { events.push('outside done') })

      if (db.kind === 'pglite') {
        // One connection: the outside statements wait for the whole transaction.
        await sleep(150)
        t.strictSame(events, [], 'still waiting while the transaction is open')
        release.open()
      } else {
        // Another pooled connection: it does not wait, and reads committed data only.
        t.strictSame(await outside, [{ id: 2 }])
        release.open()
      }
      t.match(await txDone, { message: 'roll back' })
      t.strictSame(await outside, [{ id: 2 }], 'never saw the uncommitted row')
      t.strictSame(events, db.kind === 'pglite' ? ['transaction ended', 'outside done'] : ['outside done', 'transaction ended'])
      // Had the outside INSERT run inside the transaction, the rollback would have taken it too.
      t.strictSame((await store.query('SELECT id FROM cc_vis')).rows, [{ id: 2 }])
    })

    if (db.kind === 'pglite') {
      t.test('PGlite: concurrent transactions run one after another, never interleaved', async (t) => {
        await store.exec('CREATE TABLE cc_steps (seq serial PRIMARY KEY, tx int, step text)')
        const run = async (i: number): Promise<void> => await store.transaction(async (tx: Tx) => {
          await tx.query('INSERT INTO cc_steps (tx, step) VALUES ($1, $2)', [i, 'begin'])
          await sleep(2) // give the others every chance to cut in
          await tx.query('INSERT INTO cc_steps (tx, step) VALUES ($1, $2)', [i, 'end'])
        })
        // Plain queries issued meanwhile must land between transactions, not inside one.
        await Promise.all([
          ...Array.from({ length: 8 }, async (_, i) => await run(i)),
          ...Array.from({ length: 8 }, async (_, i) => await store.query('INSERT INTO cc_steps (tx, step) VALUES ($1, $2)', [100 + i, 'single']))
        ])
        const { rows } = await store.query<{ tx: number, step: string }>('SELECT tx, step FROM cc_steps ORDER BY seq')
        t.equal(rows.length, 24)
        for (let i = 0; i < rows.length; i++) {
          const row = rows[i]
          if (row?.step === 'begin') t.strictSame(rows[i + 1], { tx: row.tx, step: 'end' }, `transaction ${row.tx} not interleaved`)
        }
      })
    }

    if (db.kind === 'pg') {
      t.test('server: a serializable write skew fails one transaction, and a retry saves it', async (t) => {
        await store.exec('CREATE TABLE cc_skew (id serial PRIMARY KEY, v int NOT NULL)')
        const skew = (retries: number): Promise<unknown[]> => {
          const bothRead = barrier(2)
          return Promise.allSettled([1, 2].map(async (v) => await store.transaction(async (tx) => {
            await tx.query('SELECT sum(v) FROM cc_skew')
            await bothRead()
            await tx.query('INSERT INTO cc_skew (v) VALUES ($1)', [v])
          }, { isolation: 'serializable', retries })))
        }
        const once = await skew(0) as PromiseSettledResult<unknown>[]
        const failed = once.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
        t.equal(failed.length, 1, 'exactly one is refused')
        t.ok(failed[0]?.reason instanceof SerializationFailure)
        t.equal((failed[0]?.reason as SerializationFailure).sqlState, '40001')
        t.ok((failed[0]?.reason as SerializationFailure).retryable)
        await store.exec('TRUNCATE cc_skew')
        const retried = await skew(3) as PromiseSettledResult<unknown>[]
        t.strictSame(retried.map((r) => r.status), ['fulfilled', 'fulfilled'])
        t.strictSame((await store.query('SELECT count(*) AS n FROM cc_skew')).rows, [{ n: 2 }])
      })

      t.test('server: a deadlock victim gets a SerializationFailure (40P01), and a retry saves it', async (t) => {
        await store.exec('CREATE TABLE cc_dead (id int PRIMARY KEY, n int NOT NULL); INSERT INTO cc_dead VALUES (1, 0), (2, 0)')
        const deadlock = (retries: number): Promise<PromiseSettledResult<void>[]> => {
          const bothLocked = barrier(2) // open for good once both arrived: a retry passes straight through
          return Promise.allSettled([[1, 2], [2, 1]].map(async ([a, b]) => await store.transaction(async (tx) => {
            await tx.query('UPDATE cc_dead SET n = n + 1 WHERE id = $1', [a])
            await bothLocked()
            await tx.query('UPDATE cc_dead SET n = n + 1 WHERE id = $1', [b])
          }, { retries })))
        }
        const once = await deadlock(0)
        const failed = once.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
        t.equal(failed.length, 1)
        t.match(failed[0]?.reason, { constructor: SerializationFailure, sqlState: '40P01' })
        const retried = await deadlock(2)
        t.strictSame(retried.map((r) => r.status), ['fulfilled', 'fulfilled'])
        t.strictSame((await store.query('SELECT n FROM cc_dead ORDER BY id')).rows, [{ n: 3 }, { n: 3 }])
      })
    }
  })
}
