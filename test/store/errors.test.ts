import t from 'tap'
import {
  CheckViolation,
  ConstraintViolation,
  ForeignKeyViolation,
  NotNullViolation,
  SerializationFailure,
  StoreError,
  TransactionAborted,
  StatementTimeout,
  Unavailable,
  UniqueViolation,
  isStoreError
} from '../../store/index.js'
import { fromDatabaseError, isDatabaseError } from '../../store/errors.js'

/** What pg's and PGlite's DatabaseError carry: a SQLSTATE, a severity, and fields. */
function dbError (code: string, fields: Record<string, string> = {}): Error {
  return Object.assign(new Error('raw message with a value: Key (name)=(secret-value) already exists.'), {
    severity: 'ERROR',
    code,
    detail: 'Key (name)=(secret-value) already exists.',
    query: 'INSERT INTO authors (name) VALUES ($1)',
    params: ['secret-value'],
    ...fields
  })
}

t.test('maps by SQLSTATE and fields, never by message', async (t) => {
  const cases: Array<[string, Record<string, string>, abstract new (...a: never[]) => StoreError, string, Record<string, unknown>]> = [
    ['23505', { constraint: 'authors_name_key', table: 'authors' }, UniqueViolation, 'STORE_UNIQUE_VIOLATION', { constraint: 'authors_name_key', table: 'authors' }],
    ['23503', { constraint: 'documents_author_fkey', table: 'documents' }, ForeignKeyViolation, 'STORE_FOREIGN_KEY_VIOLATION', { constraint: 'documents_author_fkey', table: 'documents' }],
    ['23514', { constraint: 'authors_age_check', table: 'authors' }, CheckViolation, 'STORE_CHECK_VIOLATION', { constraint: 'authors_age_check' }],
    ['23502', { column: 'name', table: 'authors' }, NotNullViolation, 'STORE_NOT_NULL_VIOLATION', { column: 'name', table: 'authors', constraint: undefined }],
    ['23P01', { constraint: 'booking_excl', table: 'booking' }, ConstraintViolation, 'STORE_CONSTRAINT_VIOLATION', { constraint: 'booking_excl' }],
    ['23001', {}, ConstraintViolation, 'STORE_CONSTRAINT_VIOLATION', { constraint: undefined }],
    ['40001', {}, SerializationFailure, 'STORE_SERIALIZATION_FAILURE', { retryable: true }],
    ['40P01', {}, SerializationFailure, 'STORE_SERIALIZATION_FAILURE', { retryable: true }],
    ['25P02', {}, TransactionAborted, 'STORE_TRANSACTION_ABORTED', { retryable: false }],
    ['08006', {}, Unavailable, 'STORE_UNAVAILABLE', { retryable: true }],
    ['08001', {}, Unavailable, 'STORE_UNAVAILABLE', {}],
    ['53300', {}, Unavailable, 'STORE_UNAVAILABLE', {}],
    ['57P01', {}, Unavailable, 'STORE_UNAVAILABLE', {}],
    ['57P02', {}, Unavailable, 'STORE_UNAVAILABLE', {}],
    ['57P03', {}, Unavailable, 'STORE_UNAVAILABLE', {}],
    ['57P05', {}, Unavailable, 'STORE_UNAVAILABLE', {}],
    ['25P03', {}, Unavailable, 'STORE_UNAVAILABLE', {}],
    // The server's statement_timeout cancelled it: a StatementTimeout, unavailable like the client's own.
    ['57014', {}, StatementTimeout, 'STORE_UNAVAILABLE', { retryable: true, name: 'StatementTimeout' }],
    ['42601', {}, StoreError, 'STORE_QUERY_FAILED', {}],
    ['22P02', {}, StoreError, 'STORE_QUERY_FAILED', {}]
  ]
  for (const [code, fields, Class, storeCode, props] of cases) {
    const raw = dbError(code, fields)
    const err = fromDatabaseError(raw)
    t.ok(err instanceof Class, `${code} → ${Class.name}`)
    t.ok(isStoreError(err), `${code} is a store error`)
    t.equal(err?.code, storeCode, `${code} code`)
    t.equal(err?.sqlState, code, `${code} sqlState`)
    t.equal(err?.cause, raw, `${code} keeps the raw error as cause`)
    for (const [k, v] of Object.entries(props)) t.equal((err as unknown as Record<string, unknown>)[k], v, `${code} ${k}`)
  }
})

t.test('the exact subclass, not a sibling', async (t) => {
  t.notOk(fromDatabaseError(dbError('23505')) instanceof ForeignKeyViolation)
  t.notOk(fromDatabaseError(dbError('42601')) instanceof Unavailable)
  t.notOk(fromDatabaseError(dbError('42P01')) instanceof ConstraintViolation)
  t.equal(fromDatabaseError(dbError('23505'))?.name, 'UniqueViolation')
})

t.test('the same message text under another SQLSTATE maps by SQLSTATE', async (t) => {
  const err = fromDatabaseError(Object.assign(dbError('42601'), { message: 'duplicate key value violates unique constraint "x"' }))
  t.notOk(err instanceof UniqueViolation)
  t.equal(err?.code, 'STORE_QUERY_FAILED')
})

t.test('rendering carries no SQL text and no values', async (t) => {
  for (const code of ['23505', '23503', '23514', '23502', '23P01', '40001', '40P01', '25P02', '08006', '42601']) {
    const err = fromDatabaseError(dbError(code, { constraint: 'c1', table: 't1', column: 'col1' }))
    for (const rendered of [err?.message, String(err), JSON.stringify(err)]) {
      t.notMatch(rendered, /secret-value|INSERT|VALUES|\$1|Key \(/, `${code}: ${String(rendered)}`)
    }
  }
  t.equal(fromDatabaseError(dbError('23505', { constraint: 'authors_name_key', table: 'authors' }))?.message,
    'Unique constraint "authors_name_key" on table "authors" would be violated.')
  t.equal(fromDatabaseError(dbError('23502', { column: 'name', table: 'authors' }))?.message, 'Column "name" of table "authors" must not be null.')
  t.equal(fromDatabaseError(dbError('23514'))?.message, 'Check constraint (unknown) on table (unknown) would be violated.')
  t.match(fromDatabaseError(dbError('40P01'))?.message, /deadlock/)
  t.match(fromDatabaseError(dbError('40001'))?.message, /serialized/)
  t.equal(fromDatabaseError(dbError('42601'))?.message, 'The database refused the statement (SQLSTATE 42601).')
  t.strictSame(JSON.parse(JSON.stringify(fromDatabaseError(dbError('23505', { constraint: 'c1', table: 't1' })))), {
    name: 'UniqueViolation', code: 'STORE_UNIQUE_VIOLATION', sqlState: '23505', retryable: false, constraint: 'c1', table: 't1'
  })
})

t.test('only database errors are mapped', async (t) => {
  const notDatabase: unknown[] = [
    undefined,
    null,
    'boom',
    new Error('Connection terminated unexpectedly'),
    Object.assign(new Error('write EPIPE'), { code: 'EPIPE', errno: -32 }),
    Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    { code: 23505, severity: 'ERROR' },
    { code: '2350', severity: 'ERROR' },
    { code: '23505' },
    new TypeError('Do not know how to serialize a BigInt')
  ]
  for (const err of notDatabase) {
    t.notOk(isDatabaseError(err), `not a database error: ${String(err)}`)
    t.equal(fromDatabaseError(err), undefined)
  }
  t.ok(isDatabaseError({ code: '23505', severity: 'ERROR' }))
  t.ok(isDatabaseError({ code: '57P01', severity: 'FATAL' }))
})

t.test('errors built by hand', async (t) => {
  const u = new Unavailable()
  t.equal(u.message, 'The database is unavailable.')
  t.equal(u.cause, undefined)
  t.equal(u.sqlState, undefined)
  t.equal(new Unavailable('The store is closed.').message, 'The store is closed.')
  const s = new SerializationFailure()
  t.ok(s.retryable)
  t.match(s.message, /serialized/)
  t.equal(new TransactionAborted().code, 'STORE_TRANSACTION_ABORTED')
  t.equal(new UniqueViolation().constraint, undefined)
  t.equal(new ForeignKeyViolation({ constraint: 'fk', table: 'c' }).message, 'Foreign key constraint "fk" on table "c" would be violated.')
  t.equal(new NotNullViolation().column, undefined)
  t.equal(new CheckViolation({ constraint: 'ck' }).constraint, 'ck')
  const base = new StoreError('x')
  t.equal(base.code, 'STORE_QUERY_FAILED')
  t.notOk(base.retryable)
  t.equal(new ConstraintViolation('y').code, 'STORE_CONSTRAINT_VIOLATION')
  t.notOk(isStoreError(new Error('x')))
  // No HTTP status: the resource layer chooses 409/503, the problem plugin never renders these as they are.
  t.notOk('statusCode' in new UniqueViolation())
})
