import t from 'tap'
import { databases } from '../support/databases.js'
import { EventTables } from '../../store/events.js'
import { migrate } from '../../store/index.js'

// The outbox's pages keep room for the claims: a claim rewrites only the lease and the counts,
// so each claimed row's new version fits beside it and no index entry is written (a HOT update).
// Were the pages filled whole, most claims would move their row and add to every index.

const ROWS = 200
// About the size of a document's event: a handful of rows fill a page.
const PAYLOAD = JSON.stringify({ type: 'document.created', data: { text: 'x'.repeat(900) } })

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const tables = new EventTables('room')
    await migrate(store, tables.migrations())
    const at = new Date('2026-01-01T00:00:00Z')
    await store.transaction(async tx => {
      await tables.insertSubscription(tx, { ctx: 'prod', id: 's-1', url: 'https://example.com/hook', events: ['document.created'], description: null, secret: 'whsec_x', etag: '"e"', createdBy: null }, at)
      const events = Array.from({ length: ROWS }, () => ({ type: 'document.created', payload: PAYLOAD }))
      t.equal(await tables.emit(tx, 'prod', null, at, events), ROWS)
    })

    // Counted within the transaction that claims, so nothing else on the table is counted.
    const { claimed, hot } = await store.transaction(async tx => {
      const claimed = await tables.claim(tx, 'instance-1', new Date(at.getTime() + 1000), 60_000, ROWS, [], ROWS)
      const { rows } = await tx.query("SELECT n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_xact_user_tables WHERE relname = 'room_deliveries'")
      return { claimed: claimed.length, hot: rows[0] as { upd: number, hot: number } }
    })
    t.equal(claimed, ROWS, 'every delivery claimed')
    t.equal(hot.upd, ROWS, 'one update per claim')
    t.equal(hot.hot, ROWS, 'every claim a HOT update: its page had room')

    const { rows } = await store.query("SELECT reloptions FROM pg_class WHERE relname = 'room_deliveries'")
    t.match(rows[0], { reloptions: ['fillfactor=50'] })
  })
}
