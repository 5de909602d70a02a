import t from 'tap'
import { countStatements, transactionsOf } from './count-statements.js'
import { databases } from './databases.js'

// The statement counter other tests bound their work with: the same counts on both engines.

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const outer = countStatements(store)
    const sql = countStatements(store)
    await store.query('SELECT 1')
    await store.exec('SELECT 1; SELECT 2')
    await store.transaction(async (tx) => {
      await tx.query('SELECT 3')
      await tx.savepoint(async (inner) => { await inner.query('SELECT 4') })
      await tx.savepoint(async () => { throw new Error('undone') }).catch(() => {})
    })
    await store.transaction(async () => { throw new Error('rolled back') }).catch(() => {})
    // Its stop is left out: a server's listening connection, when nothing listens any more, closes without UNLISTEN.
    const stop = await store.listen('count_statements', () => {})
    // A server's transaction sends its BEGIN with the settings as one script, as PGlite's is counted.
    t.equal(sql.count(), 2 + 8 + 2 + 1, sql.texts().join('\n'))
    t.match(sql.texts(), ['SELECT 1', 'SELECT 1; SELECT 2', /^BEGIN/, 'SELECT 3'])
    const transactions = transactionsOf(sql.texts())
    t.strictSame(transactions.map(x => x.committed), [true, false], 'the transactions, and how each ended')
    t.strictSame(transactions.map(x => x.statements.filter(s => /^SELECT/.test(s))), [['SELECT 3', 'SELECT 4'], []], 'each with its statements, its savepoints\' included')
    sql.reset()
    t.equal(sql.count(), 0, 'reset')
    sql.restore()
    sql.restore()
    await store.query('SELECT 5')
    t.equal(sql.count(), 0, 'restored: no longer counting')
    t.equal(outer.count(), 14, 'another counter, started before, counts on')
    outer.restore()
    await store.query('SELECT 6')
    await stop()
    t.equal(outer.count(), 14)
  })
}
