import t from 'tap'
import { migrate, StoreError, type Migration, type Store, type StoreLogger } from '../../store/index.js'
import { databases } from '../support/databases.js'

/** Migrations that each leave one row in `<prefix>_log` when applied, slowly enough to overlap. */
function logged (prefix: string, count: number, pause = 0): Migration[] {
  const list: Migration[] = [{ id: `${prefix}-000`, sql: `CREATE TABLE ${prefix}_log (id text NOT NULL)` }]
  for (let i = 1; i <= count; i++) {
    const id = `${prefix}-${String(i).padStart(3, '0')}`
    list.push({ id, sql: `SELECT pg_sleep(${pause}); INSERT INTO ${prefix}_log VALUES ('${id}')` })
  }
  return list
}

async function recorded (store: Store, prefix: string): Promise<string[]> {
  const { rows } = await store.query<{ id: string }>('SELECT id FROM schema_migrations WHERE id LIKE $1 ORDER BY id', [`${prefix}-%`])
  return rows.map((r) => r.id)
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async (t) => {
    const store = await db.create(t)

    t.test('applies in order, records each, and logs it', async (t) => {
      const order: string[] = []
      const infos: object[] = []
      const logger: StoreLogger = { info (obj) { infos.push(obj) }, warn () {}, error () {} }
      const migrations: Migration[] = [
        { id: 'a-1', sql: 'CREATE TABLE a_items (id int PRIMARY KEY); CREATE TABLE a_other (id int)' },
        { id: 'a-2', sql: async (tx) => { order.push('a-2'); await tx.query('INSERT INTO a_items VALUES ($1)', [1]) } },
        { id: 'a-3', sql: 'ALTER TABLE a_items ADD COLUMN name text NOT NULL DEFAULT $$x$$' }
      ]
      t.strictSame(await migrate(store, migrations, { logger }), ['a-1', 'a-2', 'a-3'])
      t.strictSame(order, ['a-2'])
      t.strictSame(infos, [{ migration: 'a-1' }, { migration: 'a-2' }, { migration: 'a-3' }])
      t.strictSame((await store.query('SELECT id, name FROM a_items')).rows, [{ id: 1, name: 'x' }])
      t.strictSame(await recorded(store, 'a'), ['a-1', 'a-2', 'a-3'])
      const { rows } = await store.query<{ applied_at: string }>("SELECT applied_at FROM schema_migrations WHERE id = 'a-1'")
      t.match(rows[0]?.applied_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    })

    t.test('idempotent: a second run applies nothing, a longer list only the new ones', async (t) => {
      let runs = 0
      const migrations: Migration[] = [
        { id: 'b-1', sql: 'CREATE TABLE b_items (id int)' }, // would fail if run twice
        { id: 'b-2', sql: async () => { runs++ } }
      ]
      t.strictSame(await migrate(store, migrations), ['b-1', 'b-2'])
      t.strictSame(await migrate(store, migrations), [])
      t.strictSame(await migrate(store, [...migrations, { id: 'b-3', sql: 'CREATE TABLE b_more (id int)' }]), ['b-3'])
      t.equal(runs, 1)
      t.strictSame(await recorded(store, 'b'), ['b-1', 'b-2', 'b-3'])
      t.strictSame(await migrate(store, []), [], 'an empty list is fine')
    })

    t.test('a failing migration leaves no trace and stops the run', async (t) => {
      const boom = new Error('boom')
      const migrations: Migration[] = [
        { id: 'c-1', sql: 'CREATE TABLE c_items (id int)' },
        { id: 'c-2', sql: async (tx) => { await tx.exec('CREATE TABLE c_half (id int)'); await tx.query('INSERT INTO c_items VALUES (1)'); throw boom } },
        { id: 'c-3', sql: 'CREATE TABLE c_never (id int)' }
      ]
      const err = await migrate(store, migrations).catch((e: unknown) => e)
      t.equal(err, boom)
      t.strictSame(await recorded(store, 'c'), ['c-1'], 'the earlier one stays applied')
      t.strictSame((await store.query("SELECT to_regclass('c_half') AS half, to_regclass('c_never') AS never")).rows, [{ half: null, never: null }])
      t.strictSame((await store.query('SELECT * FROM c_items')).rows, [])
      // A SQL error is a store error, and the migration is still pending afterwards.
      const bad: Migration[] = [{ id: 'c-9', sql: 'CREATE TABLE c_ok (id int); CREATE TABLE c_ok (id int)' }]
      await t.rejects(migrate(store, bad), StoreError)
      t.strictSame(await recorded(store, 'c'), ['c-1'])
      t.strictSame(await migrate(store, [migrations[0] as Migration, { id: 'c-9', sql: 'CREATE TABLE c_ok (id int)' }]), ['c-9'], 'fixed, it applies')
    })

    t.test('refuses a malformed list before touching the database', async (t) => {
      const cases: Array<[unknown, RegExp]> = [
        ['nope', /migrations must be an array, got string/],
        [[{ id: '', sql: 'SELECT 1' }], /non-empty string id, got ""/],
        [[{ sql: 'SELECT 1' }], /non-empty string id, got undefined/],
        [[null], /non-empty string id/],
        [[{ id: 'd-1', sql: 'SELECT 1' }, { id: 'd-1', sql: 'SELECT 2' }], /"d-1" appears twice/],
        [[{ id: 'd-2', sql: 42 }], /migration "d-2" needs sql as a string or a function, got number/]
      ]
      for (const [list, message] of cases) {
        await t.rejects(migrate(store, list as Migration[]), { name: 'TypeError', message }, JSON.stringify(list))
      }
      t.strictSame(await recorded(store, 'd'), [])
    })

    t.test('concurrent runs on one store apply each migration once', async (t) => {
      const migrations = logged('e', 4)
      const results = await Promise.all([migrate(store, migrations), migrate(store, migrations), migrate(store, migrations)])
      t.strictSame(results.flat().sort(), migrations.map((m) => m.id), 'each id applied by exactly one run')
      t.strictSame((await store.query('SELECT id FROM e_log ORDER BY id')).rows.map((r) => r.id), ['e-001', 'e-002', 'e-003', 'e-004'])
    })

    if (db.sibling !== undefined) {
      const sibling = db.sibling
      t.test('server: instances starting at once apply each migration once', async (t) => {
        const instances = [store, await sibling(t, store), await sibling(t, store), await sibling(t, store)]
        const migrations = logged('f', 6, 0.02)
        const results = await Promise.all(instances.map(async (s) => await migrate(s, migrations)))
        t.strictSame(results.flat().sort(), migrations.map((m) => m.id), 'each id applied by exactly one instance')
        const { rows } = await store.query<{ id: string, n: number }>('SELECT id, count(*) AS n FROM f_log GROUP BY id ORDER BY id')
        t.strictSame(rows, migrations.slice(1).map((m) => ({ id: m.id, n: 1 })))
        t.strictSame(await recorded(store, 'f'), migrations.map((m) => m.id))
      })
    }
  })
}
