import t from 'tap'
import { randomBytes } from 'node:crypto'
import { createFieldMap } from '../../model/fields.js'
import type { Filter } from '../../model/query.js'
import { caseFolding, FOLD_COLLATION_SQL, foldCollation, needsFolding, type CollationSource } from '../../store/case-folding.js'
import { createStore, quoteIdent, type Store } from '../../store/index.js'
import { readPage } from '../../store/read-page.js'
import { admin, databases, TEST_DATABASE_URL } from '../support/databases.js'

/*
 * The collation the case-insensitive operators fold case under: chosen once per store from
 * what its database offers (pg_c_utf8, else a libc C.UTF-8 collation, else "C"), and asked
 * only when a filter needs it.
 */

const ci = (value: string): Filter => ({ kind: 'cmp', field: 'name', op: 'contains', values: [value], ci: true })
const cs = (value: string): Filter => ({ kind: 'cmp', field: 'name', op: 'contains', values: [value], ci: false })

/** A source that counts its statements, and fails the first `failures` of them. */
function counted (store: Store, failures = 0): CollationSource & { statements: string[] } {
  const db = {
    statements: [] as string[],
    query: async <R extends object>(sql: string, params: unknown[]) => {
      db.statements.push(sql)
      if (db.statements.length <= failures) throw new Error('connection refused')
      return await store.query<R>(sql, params)
    }
  }
  return db
}

t.test('needsFolding: a case-insensitive operator anywhere in the filter', async t => {
  t.equal(needsFolding(null), false)
  t.equal(needsFolding(cs('a')), false)
  t.equal(needsFolding(ci('a')), true)
  t.equal(needsFolding({ kind: 'or', children: [cs('a'), { kind: 'and', children: [cs('b'), ci('c')] }] }), true)
  t.equal(needsFolding({ kind: 'and', children: [cs('a'), cs('b')] }), false)
})

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)

    t.test('the collation chosen folds letters beyond ASCII', async t => {
      const collation = await foldCollation(store)
      const { rows } = await store.query<{ version: number }>("SELECT current_setting('server_version_num')::integer AS version")
      const version = (rows[0] as { version: number }).version
      // PGlite is PostgreSQL 17 or later, and every server from 17 has the builtin collation.
      if (db.kind === 'pglite' || version >= 170000) t.equal(collation, 'pg_c_utf8')
      else t.not(collation, 'pg_c_utf8', 'a server before 17 has no pg_c_utf8')
      if (collation !== 'C') {
        const lower = await store.query<{ l: string }>(`SELECT lower($1::text COLLATE "${collation}") AS l`, ['ÉMILE ZOË ÜNÏ ΩΣ ЖУК İ ẞ'])
        t.equal(lower.rows[0]?.l, 'émile zoë ünï ωσ жук i ß', `${collation}: the simple lower case of each code point`)
      }
    })

    t.test('asked once per source, again after a failure, and only for a filter that needs it', async t => {
      const once = counted(store)
      t.equal(await caseFolding(once, cs('a')), 'unicode', 'no case-insensitive operator: nothing to ask')
      t.strictSame(once.statements, [])
      const first = await foldCollation(once)
      t.equal(await foldCollation(once), first)
      t.equal(await caseFolding(once, ci('a')), first === 'C' ? 'ascii' : 'unicode')
      t.strictSame(once.statements, [FOLD_COLLATION_SQL], 'one statement')

      const flaky = counted(store, 1)
      await t.rejects(foldCollation(flaky), new Error('connection refused'))
      t.equal(await foldCollation(flaky), first, 'asked again')
      t.equal(flaky.statements.length, 2)

      const none: CollationSource = { query: async <R extends object>() => ({ rows: [] as R[] }) }
      t.equal(await foldCollation(none), 'C', 'none of the collations: "C"')
      t.equal(await caseFolding(none, ci('a')), 'ascii')
    })

    t.test('readPage asks at its first case-insensitive filter only', async t => {
      await store.exec("CREATE TABLE names (id text PRIMARY KEY, name text); INSERT INTO names VALUES ('n1', 'Émile'), ('n2', 'ZOË'), ('n3', 'émile')")
      const fields = createFieldMap([{ path: 'id', type: 'string', sortable: true }, { path: 'name', type: 'string', nullable: true }])
      const source = { select: 't.id', from: 'names t' }
      const page = async (via: CollationSource, filter: Filter): Promise<unknown> =>
        (await readPage(via, { filter, ordering: [{ field: 'id', direction: 'asc' }], paging: { kind: 'cursor', limit: 10 } }, fields, source)).items.map(row => row.id)
      const via = counted(store)
      t.strictSame(await page(via, cs('mile')), ['n1', 'n3'])
      t.equal(via.statements.length, 1, 'a case-sensitive filter: the page alone')
      const unicode = (await foldCollation(store)) !== 'C'
      t.strictSame(await page(via, ci('éMILE')), unicode ? ['n1', 'n3'] : ['n3'])
      t.strictSame(await page(via, ci('zoë')), unicode ? ['n2'] : [])
      t.equal(via.statements.length, 4, 'the collation asked once, then the pages')
    })
  })
}

t.test('a database that is not UTF8 folds under "C"', { skip: TEST_DATABASE_URL === undefined ? 'needs TEST_DATABASE_URL' : false }, async t => {
  const server = TEST_DATABASE_URL as string
  const name = `t_latin1_${process.pid}_${randomBytes(4).toString('hex')}`
  try {
    await admin(server, `CREATE DATABASE ${quoteIdent(name)} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`)
  } catch (err) {
    // A role that may not create databases cannot show this here.
    t.comment(`not checked: cannot create a LATIN1 database (${(err as Error).message})`)
    return
  }
  const url = new URL(server)
  url.pathname = `/${name}`
  const store = createStore({ databaseUrl: url.href })
  t.teardown(async () => {
    await store.close()
    await admin(server, `DROP DATABASE IF EXISTS ${quoteIdent(name)}`)
  })
  t.equal(await foldCollation(store), 'C')
  await store.exec("CREATE TABLE names (id text PRIMARY KEY, name text); INSERT INTO names VALUES ('n1', 'Émile'), ('n2', 'émile'), ('n3', 'EMILE')")
  const fields = createFieldMap([{ path: 'id', type: 'string', sortable: true }, { path: 'name', type: 'string', nullable: true }])
  const page = await readPage(store, { filter: ci('émile'), ordering: [{ field: 'id', direction: 'asc' }], paging: { kind: 'cursor', limit: 10 } }, fields, { select: 't.id', from: 'names t' })
  t.strictSame(page.items.map(row => row.id), ['n2'], 'ASCII letters only: É is not é')
})
