import t from 'tap'
import {
  CheckViolation,
  ConstraintViolation,
  ForeignKeyViolation,
  NotNullViolation,
  SerializationFailure,
  StoreError,
  TransactionAborted,
  Unavailable,
  UniqueViolation
} from '../../store/index.js'
import { databases } from '../support/databases.js'

// One behaviour suite, run over PGlite and (when TEST_DATABASE_URL is set) a server.
// One store per engine for the whole file; each test uses tables of its own.
for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async (t) => {
    const store = await db.create(t)

    t.test('kind and readiness', async (t) => {
      t.equal(store.kind, db.kind)
      await t.resolves(store.ready())
    })

    t.test('parameters are values, never SQL', async (t) => {
      await store.exec('CREATE TABLE p_people (id int PRIMARY KEY, name text NOT NULL)')
      const hostile = "x'); DROP TABLE p_people; --"
      const ins = await store.query<{ id: number, name: string }>(
        'INSERT INTO p_people (id, name) VALUES ($1, $2), ($3, $4) RETURNING id, name', [1, hostile, 2, 'Ada'])
      t.strictSame(ins.rows, [{ id: 1, name: hostile }, { id: 2, name: 'Ada' }])
      t.equal(ins.rowCount, 2)
      const sel = await store.query<{ name: string }>('SELECT name FROM p_people WHERE name = $1', [hostile])
      t.strictSame(sel.rows, [{ name: hostile }])
      t.equal(sel.rowCount, 1)
      const none = await store.query('SELECT name FROM p_people WHERE id = $1', [99])
      t.strictSame(none, { rows: [], rowCount: 0 })
      t.equal((await store.query('UPDATE p_people SET name = $1 WHERE id > $2', ['z', 0])).rowCount, 2)
      t.equal((await store.query('DELETE FROM p_people WHERE id = $1', [2])).rowCount, 1)
      t.equal((await store.query('CREATE INDEX p_people_name ON p_people (name)')).rowCount, 0)
      t.strictSame((await store.query('SELECT count(*) AS n FROM p_people')).rows, [{ n: 1 }])
    })

    t.test('an empty statement returns no rows', async (t) => {
      t.strictSame(await store.query(''), { rows: [], rowCount: 0 })
      t.strictSame(await store.query('-- nothing'), { rows: [], rowCount: 0 })
      await t.resolves(store.exec(''))
    })

    t.test('a parameter the driver cannot serialize is the caller\'s error, not a store error', async (t) => {
      const circular: Record<string, unknown> = {}
      circular.self = circular
      const err = await store.query('SELECT $1::jsonb AS j', [circular]).catch((e: unknown) => e)
      t.ok(err instanceof TypeError, String(err))
      t.notOk(err instanceof StoreError)
      t.strictSame((await store.query('SELECT 1 AS one')).rows, [{ one: 1 }], 'the connection is still fine')
    })

    t.test('query runs one statement; exec runs a script', async (t) => {
      const err = await store.query('SELECT 1; SELECT 2').catch((e: unknown) => e)
      t.ok(err instanceof StoreError, 'refused')
      t.equal((err as StoreError).sqlState, '42601')
      await store.exec('CREATE TABLE e_a (id int); CREATE TABLE e_b (id int); INSERT INTO e_a VALUES (1)')
      t.strictSame((await store.query('SELECT id FROM e_a')).rows, [{ id: 1 }])
      await t.rejects(store.exec('SELECT * FROM e_missing'), { name: 'StoreError', sqlState: '42P01' })
    })

    t.test('values read the same on both engines', async (t) => {
      const { rows } = await store.query(`SELECT
        $1::int AS i4, 42::int8 AS i8, 9007199254740993::int8 AS big, -9007199254740991::int8 AS minsafe,
        1.50::numeric AS num, 2.5::float8 AS f8, true AS b, NULL::text AS nothing, $2::text AS param_null,
        '2024-02-29'::date AS d, $3::timestamptz AS ts, $4::jsonb AS j, '{"k":[1,"x"]}'::json AS js,
        ARRAY[1, NULL]::int8[] AS i8s, ARRAY[[1, 2], [3, 4]]::int8[] AS i8m, ARRAY['2024-01-02'::date, NULL] AS ds, ARRAY['a', 'b'] AS texts,
        $5::text[] AS arr_param, '7d4c0f5e-2a8e-4f57-9c6a-0b1e5b2d9e11'::uuid AS u, $6::bool AS bp`,
      [7, null, new Date('2024-01-02T03:04:05.678Z'), JSON.stringify({ a: [1, { b: null }] }), ['x', 'y z'], false])
      t.strictSame(rows[0], {
        i4: 7,
        i8: 42,
        big: '9007199254740993',
        minsafe: -9007199254740991,
        num: '1.50',
        f8: 2.5,
        b: true,
        nothing: null,
        param_null: null,
        d: '2024-02-29',
        ts: '2024-01-02T03:04:05.678Z',
        j: { a: [1, { b: null }] },
        js: { k: [1, 'x'] },
        i8s: [1, null],
        i8m: [[1, 2], [3, 4]],
        ds: ['2024-01-02', null],
        texts: ['a', 'b'],
        arr_param: ['x', 'y z'],
        u: '7d4c0f5e-2a8e-4f57-9c6a-0b1e5b2d9e11',
        bp: false
      })
      t.type(rows[0]?.i8, 'number')
      t.type(rows[0]?.ts, 'string', 'a timestamptz is the convention\'s date-time text')
      t.strictSame((await store.query("SELECT current_setting('TimeZone') AS tz")).rows, [{ tz: 'UTC' }])
    })

    t.test('transaction commits and returns the value of its function', async (t) => {
      await store.exec('CREATE TABLE tc_items (id int PRIMARY KEY)')
      const value = await store.transaction(async (tx) => {
        await tx.query('INSERT INTO tc_items VALUES ($1), ($2)', [1, 2])
        const { rows } = await tx.query<{ n: number }>('SELECT count(*) AS n FROM tc_items')
        return rows[0]?.n
      })
      t.equal(value, 2)
      t.strictSame((await store.query('SELECT id FROM tc_items ORDER BY id')).rows, [{ id: 1 }, { id: 2 }])
    })

    t.test('transaction rolls back when its function throws, and rethrows that error', async (t) => {
      await store.exec('CREATE TABLE tr_items (id int PRIMARY KEY)')
      const mine = new Error('mine')
      const err = await store.transaction(async (tx) => {
        await tx.query('INSERT INTO tr_items VALUES (1)')
        await tx.exec('CREATE TABLE tr_ddl (id int)')
        throw mine
      }).catch((e: unknown) => e)
      t.equal(err, mine, 'the very same error')
      t.strictSame((await store.query('SELECT * FROM tr_items')).rows, [])
      t.strictSame((await store.query("SELECT to_regclass('tr_ddl') AS r")).rows, [{ r: null }], 'DDL rolled back too')
      // A store error from a statement is rethrown as such, and rolls back too.
      const dup = await store.transaction(async (tx) => {
        await tx.query('INSERT INTO tr_items VALUES (5)')
        await tx.query('INSERT INTO tr_items VALUES (5)')
      }).catch((e: unknown) => e)
      t.ok(dup instanceof UniqueViolation)
      t.strictSame((await store.query('SELECT * FROM tr_items')).rows, [])
    })

    t.test('isolation levels', async (t) => {
      for (const isolation of ['read committed', 'repeatable read', 'serializable'] as const) {
        const level = await store.transaction(async (tx) => {
          const { rows } = await tx.query<{ l: string }>("SELECT current_setting('transaction_isolation') AS l")
          return rows[0]?.l
        }, { isolation })
        t.equal(level, isolation)
      }
      const dflt = await store.transaction(async (tx) => (await tx.query("SELECT current_setting('transaction_isolation') AS l")).rows[0])
      t.strictSame(dflt, { l: 'read committed' })
      await t.rejects(store.transaction(async () => 1, { isolation: 'snapshot' as never }), { name: 'TypeError', message: /isolation must be one of .* got "snapshot"/ })
      await t.rejects(store.transaction(async () => 1, { isolation: 7 as never }), { name: 'TypeError', message: /got 7/ })
      await t.rejects(store.transaction(async () => 1, { retries: -1 }), { name: 'TypeError', message: /retries must be a non-negative integer, got -1/ })
      await t.rejects(store.transaction(async () => 1, { retries: 1.5 }), { name: 'TypeError', message: /got 1.5/ })
    })

    t.test('a transaction handle is refused once its function has returned', async (t) => {
      const kept = await store.transaction(async (tx) => tx)
      await t.rejects(kept.query('SELECT 1'), { message: /transaction has ended/ })
      await t.rejects(kept.exec('SELECT 1'), { message: /transaction has ended/ })
      await t.rejects(kept.savepoint(async () => 1), { message: /transaction has ended/ })
    })

    t.test('savepoints', async (t) => {
      await store.exec('CREATE TABLE sp_items (id int PRIMARY KEY, n int CHECK (n >= 0))')

      t.test('a failing statement inside a savepoint leaves the transaction usable', async (t) => {
        const outcomes = await store.transaction(async (tx) => {
          await tx.query('INSERT INTO sp_items VALUES (1, 1)')
          const results: string[] = []
          for (const [id, n] of [[2, 2], [1, 3], [3, -1], [4, 4]] as const) {
            try {
              await tx.savepoint(async (sp) => { await sp.query('INSERT INTO sp_items VALUES ($1, $2)', [id, n]) })
              results.push('ok')
            } catch (err) {
              results.push((err as Error).name)
            }
          }
          return results
        })
        t.strictSame(outcomes, ['ok', 'UniqueViolation', 'CheckViolation', 'ok'])
        t.strictSame((await store.query('SELECT id, n FROM sp_items ORDER BY id')).rows, [{ id: 1, n: 1 }, { id: 2, n: 2 }, { id: 4, n: 4 }])
      })

      t.test('a savepoint whose function throws undoes only its own statements', async (t) => {
        const mine = new Error('undo me')
        await store.transaction(async (tx) => {
          await tx.query('INSERT INTO sp_items VALUES (10, 1)')
          const err = await tx.savepoint(async (sp) => {
            await sp.query('INSERT INTO sp_items VALUES (11, 1)')
            throw mine
          }).catch((e: unknown) => e)
          t.equal(err, mine)
          t.equal(await tx.savepoint(async (sp) => (await sp.query('INSERT INTO sp_items VALUES (12, 1)')).rowCount), 1, 'returns its value')
        })
        t.strictSame((await store.query('SELECT id FROM sp_items WHERE id >= 10 ORDER BY id')).rows, [{ id: 10 }, { id: 12 }])
      })

      t.test('nested savepoints', async (t) => {
        await store.transaction(async (tx) => {
          await tx.savepoint(async (outer) => {
            await outer.query('INSERT INTO sp_items VALUES (20, 1)')
            await outer.savepoint(async (inner) => { await inner.query('INSERT INTO sp_items VALUES (20, 2)') }).catch(() => {})
            await outer.savepoint(async (inner) => { await inner.query('INSERT INTO sp_items VALUES (21, 1)') })
          })
          await tx.savepoint(async (outer) => {
            await outer.query('INSERT INTO sp_items VALUES (22, 1)')
            await outer.savepoint(async (inner) => { await inner.query('INSERT INTO sp_items VALUES (23, 1)') })
            throw new Error('drop 22 and 23')
          }).catch(() => {})
        })
        t.strictSame((await store.query('SELECT id FROM sp_items WHERE id >= 20 ORDER BY id')).rows, [{ id: 20 }, { id: 21 }])
      })

      t.test('without a savepoint, a failed statement aborts the transaction', async (t) => {
        // The function swallows the error and returns: COMMIT rolls back instead.
        const swallowed = await store.transaction(async (tx) => {
          await tx.query('INSERT INTO sp_items VALUES (30, 1)')
          await tx.query('INSERT INTO sp_items VALUES (30, 1)').catch(() => {})
          return 'returned'
        }).catch((e: unknown) => e)
        t.ok(swallowed instanceof TransactionAborted, 'commit reports the abort')
        t.equal((swallowed as TransactionAborted).sqlState, '25P02')
        // The next statement fails too.
        const next = await store.transaction(async (tx) => {
          await tx.query('INSERT INTO sp_items VALUES (31, -5)').catch(() => {})
          await tx.query('SELECT 1')
        }).catch((e: unknown) => e)
        t.ok(next instanceof TransactionAborted)
        t.strictSame((await store.query('SELECT id FROM sp_items WHERE id >= 30')).rows, [])
      })
    })

    t.test('constraint violations map to typed errors with their names', async (t) => {
      await store.exec(`
        CREATE TABLE cv_authors (
          id int PRIMARY KEY,
          name text NOT NULL CONSTRAINT cv_authors_name_key UNIQUE,
          age int CONSTRAINT cv_authors_age_check CHECK (age >= 0)
        );
        CREATE TABLE cv_books (
          id int PRIMARY KEY,
          author_id int CONSTRAINT cv_books_author_fkey REFERENCES cv_authors (id)
        );
        INSERT INTO cv_authors VALUES (1, 'Ada', 36);
        INSERT INTO cv_books VALUES (1, 1);`)
      const secret = 'Grace-4f1d'
      const cases: Array<[string, string, unknown[], new (...a: never[]) => ConstraintViolation, Record<string, unknown>]> = [
        ['unique', 'INSERT INTO cv_authors (id, name) VALUES ($1, $2)', [2, 'Ada'], UniqueViolation, { constraint: 'cv_authors_name_key', table: 'cv_authors', sqlState: '23505' }],
        ['primary key', 'INSERT INTO cv_authors (id, name) VALUES ($1, $2)', [1, secret], UniqueViolation, { constraint: 'cv_authors_pkey', table: 'cv_authors' }],
        ['check', 'INSERT INTO cv_authors (id, name, age) VALUES ($1, $2, $3)', [3, secret, -1], CheckViolation, { constraint: 'cv_authors_age_check', table: 'cv_authors', sqlState: '23514' }],
        ['not null', 'INSERT INTO cv_authors (id, name) VALUES ($1, $2)', [4, null], NotNullViolation, { column: 'name', table: 'cv_authors', sqlState: '23502' }],
        ['FK: referenced row missing', 'INSERT INTO cv_books VALUES ($1, $2)', [2, 99], ForeignKeyViolation, { constraint: 'cv_books_author_fkey', table: 'cv_books', sqlState: '23503' }],
        ['FK: referenced row missing on update', 'UPDATE cv_books SET author_id = $1 WHERE id = $2', [98, 1], ForeignKeyViolation, { constraint: 'cv_books_author_fkey', table: 'cv_books' }],
        ['FK: still referenced on delete', 'DELETE FROM cv_authors WHERE id = $1', [1], ForeignKeyViolation, { constraint: 'cv_books_author_fkey', table: 'cv_books' }],
        ['FK: still referenced on key update', 'UPDATE cv_authors SET id = $1 WHERE id = $2', [7, 1], ForeignKeyViolation, { constraint: 'cv_books_author_fkey', table: 'cv_books' }]
      ]
      for (const [label, sql, params, Class, fields] of cases) {
        const err = await store.query(sql, params).catch((e: unknown) => e)
        t.ok(err instanceof Class, `${label}: ${Class.name}`)
        t.ok(err instanceof ConstraintViolation, `${label}: a constraint violation`)
        t.match(err, fields, `${label}: fields`)
        const e = err as ConstraintViolation
        for (const rendered of [e.message, String(e), JSON.stringify(e)]) {
          t.notMatch(rendered, /INSERT|UPDATE|DELETE|\$1|Grace|Key \(|\b99\b|\b98\b/, `${label}: nothing of the statement in ${rendered}`)
        }
        t.ok(e.cause instanceof Error, `${label}: the raw error is kept for logs`)
      }
      // The same violation inside a transaction maps the same way.
      const inTx = await store.transaction(async (tx) => { await tx.query('INSERT INTO cv_authors (id, name) VALUES (5, $1)', ['Ada']) }).catch((e: unknown) => e)
      t.match(inTx, { name: 'UniqueViolation', constraint: 'cv_authors_name_key' })
      // Other class-23 errors are constraint violations too (here raised by hand).
      const other = await store.exec("DO $$ BEGIN RAISE EXCEPTION 'excl' USING ERRCODE = '23P01', CONSTRAINT = 'cv_excl', TABLE = 'cv_books'; END $$").catch((e: unknown) => e)
      t.ok(other instanceof ConstraintViolation)
      t.match(other, { code: 'STORE_CONSTRAINT_VIOLATION', constraint: 'cv_excl', table: 'cv_books', sqlState: '23P01' })
    })

    t.test('errors the database raises by SQLSTATE', async (t) => {
      const raise = (code: string): string => `DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = '${code}'; END $$`
      await t.rejects(store.exec(raise('40001')), SerializationFailure)
      await t.rejects(store.exec(raise('40P01')), SerializationFailure)
      await t.rejects(store.exec(raise('08006')), Unavailable)
      await t.rejects(store.query('SELECT 1/0'), { name: 'StoreError', code: 'STORE_QUERY_FAILED', sqlState: '22012' })
      // The store is still usable afterwards (on a server the broken-looking connection was dropped).
      t.strictSame((await store.query('SELECT 1 AS one')).rows, [{ one: 1 }])
    })

    t.test('retries after serialization failures', async (t) => {
      await store.exec('CREATE TABLE rt_log (attempt int)')
      t.test('off by default', async (t) => {
        let attempts = 0
        await t.rejects(store.transaction(async () => { attempts++; throw new SerializationFailure() }), SerializationFailure)
        t.equal(attempts, 1)
      })
      t.test('runs the function again, each time in a fresh transaction', async (t) => {
        let attempts = 0
        const value = await store.transaction(async (tx) => {
          attempts++
          await tx.query('INSERT INTO rt_log VALUES ($1)', [attempts])
          if (attempts < 3) await tx.exec("DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$")
          return attempts
        }, { retries: 5 })
        t.equal(value, 3)
        t.strictSame((await store.query('SELECT attempt FROM rt_log')).rows, [{ attempt: 3 }], 'failed attempts left nothing')
      })
      t.test('gives up after `retries` more attempts', async (t) => {
        let attempts = 0
        await t.rejects(store.transaction(async () => { attempts++; throw new SerializationFailure({ sqlState: '40P01' }) }, { retries: 2 }), SerializationFailure)
        t.equal(attempts, 3)
      })
      t.test('other errors are not retried', async (t) => {
        let attempts = 0
        await t.rejects(store.transaction(async () => { attempts++; throw new Unavailable() }, { retries: 3 }), Unavailable)
        t.equal(attempts, 1)
      })
    })
  })
}
