import t from 'tap'
import { databases } from '../support/databases.js'
import { EventTables } from '../../store/events.js'
import { migrate, type Queryable } from '../../store/index.js'

// Every write asks which active subscriptions of its context want its event: the quiet check
// (none does) or the outbox part (one delivery each), and `emit`. They find them by the event
// type, from an index: what that costs a write does not grow with the subscriptions that want
// other events. Reading each active subscription of the context cost a write each of them.

const AT = new Date('2026-01-01T00:00:00Z')
const OTHERS = 2000

/** Rows of the subscriptions table read so far in this transaction, by scans and from indexes. */
async function rowsRead (tx: Queryable): Promise<number> {
  const { rows } = await tx.query("SELECT coalesce(sum(seq_tup_read + coalesce(idx_tup_fetch, 0)), 0)::int AS n FROM pg_stat_xact_user_tables WHERE relname = 'look_subscriptions'")
  return (rows[0] as { n: number }).n
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const tables = new EventTables('look')
    await migrate(store, tables.migrations())
    // Subscriptions made one by one after the index exists, as a service makes them.
    await store.query(`INSERT INTO look_subscriptions (ctx, id, url, events, secret, etag)
      SELECT 'a', 'other-' || n, 'https://example.com/hook', ARRAY['author.created', 'author.updated', 'book.' || n], 'whsec_x', '"e"'
      FROM generate_series(1, $1::int) AS n`, [OTHERS])
    await store.query(`INSERT INTO look_subscriptions (ctx, id, url, events, active, secret, etag) VALUES
      ('a', 'wants', 'https://example.com/hook', ARRAY['document.created'], true, 'whsec_x', '"e"'),
      ('a', 'off', 'https://example.com/hook', ARRAY['document.deleted'], false, 'whsec_x', '"e"'),
      ('b', 'elsewhere', 'https://example.com/hook', ARRAY['document.updated'], true, 'whsec_x', '"e"')`)
    // As autovacuum does on a server, and the embedded store's own pass (store/embedded-vacuum.ts) on PGlite.
    await store.query('ANALYZE look_subscriptions')

    t.test('the quiet check', async t => {
      // The type, and how many active subscriptions of context a want it.
      const cases: Array<[string, number]> = [['document.created', 1], ['document.updated', 0], ['document.deleted', 0], ['author.created', OTHERS]]
      for (const [type, wanting] of cases) {
        const part = tables.quietPart(type)
        // Named, and run past the executions after which PostgreSQL may plan it once for any type.
        for (let n = 0; n < 7; n++) {
          const { quiet, read } = await store.transaction(async tx => {
            const before = await rowsRead(tx)
            const { rows } = await tx.query(`SELECT ${part.sql(2, '$1::text')} AS quiet`, ['a', ...part.values], { name: 'look_quiet' })
            return { quiet: (rows[0] as { quiet: boolean }).quiet, read: await rowsRead(tx) - before }
          })
          t.equal(quiet, wanting === 0, `${type}: ${wanting === 0 ? 'no subscription of the context wants it' : 'some want it'}`)
          // What wants it, and the few rows a scan of the whole table would find beside them.
          if (n === 0 || n === 6) t.ok(read <= wanting + 3, `${type}: ${read} rows read, with ${wanting} of ${OTHERS + 1} active subscriptions wanting it`)
        }
      }
    })

    t.test('the outbox part of a write joins the subscriptions that want its event, reading none of the others', async t => {
      const part = tables.outboxPart('document.created', null, AT, false)
      const written = { source: 'w', snapshot: 'w.snap', ctx: 'w.ctx' }
      const text = `WITH w AS (SELECT $4::text AS ctx, ARRAY['d1', 'v1']::text[] AS snap), ${part.sql(1, written)} SELECT count(*)::int AS n FROM o`
      for (let n = 0; n < 7; n++) {
        const { count, read } = await store.transaction(async tx => {
          const before = await rowsRead(tx)
          const { rows } = await tx.query(text, [...part.values, 'a'], { name: 'look_outbox' })
          const count = (rows[0] as { n: number }).n
          const read = await rowsRead(tx) - before
          await tx.query('DELETE FROM look_deliveries')
          return { count, read }
        })
        t.equal(count, 1, 'one delivery: the one subscription that wants it')
        if (n === 0 || n === 6) t.ok(read <= 3, `${read} rows read`)
      }
    })

    t.test('emit writes one delivery per wanting subscription, reading none of the others', async t => {
      await store.transaction(async tx => {
        const before = await rowsRead(tx)
        const written = await tables.emit(tx, 'a', null, AT, [{ type: 'document.created', payload: '{}' }, { type: 'document.updated', payload: '{}' }])
        const read = await rowsRead(tx) - before
        t.equal(written, 1, 'the one subscription of the context that wants document.created')
        t.ok(read <= 10, `${read} rows read`)
      })
      const { rows } = await store.query('SELECT subscription_id AS sub, event_type AS type FROM look_deliveries')
      t.strictSame(rows.map(r => ({ ...r })), [{ sub: 'wants', type: 'document.created' }])
    })
  })
}
