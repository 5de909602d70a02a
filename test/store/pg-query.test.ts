import t from 'tap'
import type { EventEmitter } from 'node:events'
import { createRequire } from 'node:module'
import pg from 'pg'
import { ArrayQuery } from '../../store/pg-query.js'
import { OID, parseInt8, parseTimestamptz } from '../../store/parsers.js'
import { TEST_DATABASE_URL } from '../support/databases.js'

// store/pg-query.ts sets two members of pg's Query; these run it on the installed pg against a
// server, so an upgrade of pg that renames them fails here.

const types = new pg.TypeOverrides()
types.setTypeParser(OID.int8, parseInt8)
types.setTypeParser(OID.timestamptz, parseTimestamptz)

t.test('pg\'s Query keeps the members ArrayQuery sets', async t => {
  const query = new pg.Query({ text: 'SELECT 1' }) as unknown as Record<string, unknown>
  t.ok('_result' in query && typeof query._result === 'object', '_result')
  t.ok('_parsers' in (query._result as object), '_result._parsers')
  const proto = pg.Query.prototype as unknown as Record<string, unknown>
  for (const member of ['handleRowDescription', 'prepare', 'hasBeenParsed', '_getRows', 'handleError']) t.equal(typeof proto[member], 'function', member)
  const connection = (pg as unknown as { Connection: { prototype: Record<string, unknown> } }).Connection.prototype
  for (const member of ['bind', 'sync']) t.equal(typeof connection[member], 'function', `connection.${member}`)
  const utils = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (v: unknown) => unknown }
  t.equal(utils.prepareValue([1, null, 'a"b']), '{"1",NULL,"a\\"b"}', 'pg/lib/utils.js prepareValue')
})

t.test('ArrayQuery is the Query pg makes of the same config', async t => {
  // ArrayQuery gives pg the text and values and sets the rest itself: it must end as pg's own.
  const values = ['a', 1]
  const ours = new ArrayQuery('SELECT $1::text, $2::int', values, 'pg-query-same', types) as unknown as Record<string, unknown>
  const theirs = new pg.Query({ text: 'SELECT $1::text, $2::int', values, name: 'pg-query-same', rowMode: 'array', queryMode: 'extended' } as pg.QueryConfig) as unknown as Record<string, unknown>
  for (const member of ['text', 'values', 'name', 'queryMode', '_rowMode', 'portal', 'rows', 'binary']) t.strictSame(ours[member], theirs[member], member)
  const result = (q: Record<string, unknown>): Record<string, unknown> => q._result as Record<string, unknown>
  for (const member of ['rowAsArray', 'parseRow']) t.equal(result(ours)[member], result(theirs)[member], `_result.${member}`)
  t.equal(ours._results, ours._result, 'one result')
  const unnamed = new ArrayQuery('SELECT 1', [], undefined, types) as unknown as Record<string, unknown>
  t.equal(unnamed.name, undefined, 'no name: run unnamed')
})

t.test('ArrayQuery on a server', { skip: TEST_DATABASE_URL === undefined ? 'set TEST_DATABASE_URL to run it (CI does)' : false }, async t => {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: '-c TimeZone=UTC', types })
  await client.connect()
  t.teardown(() => client.end())
  const run = async (text: string, values: unknown[] = [], name?: string, on = client, typeSet = types): Promise<{ query: ArrayQuery, result: pg.QueryArrayResult }> => {
    const query = new ArrayQuery(text, values, name, typeSet)
    const result = await new Promise<pg.QueryArrayResult>((resolve, reject) => {
      on.query(query as unknown as pg.QueryConfig, (err: Error | undefined, res: pg.QueryArrayResult) => { if (err !== undefined && err !== null) reject(err); else resolve(res) })
    })
    return { query, result }
  }

  const text = "SELECT $1::int8 AS big, $2::text AS label, '2024-05-01 12:00:00+02'::timestamptz AS at, NULL::int AS none"
  const first = await run(text, ['9007199254740993', 'a'], 'pg-query-test')
  t.strictSame(first.result.rows, [['9007199254740993', 'a', '2024-05-01T10:00:00.000Z', null]], 'each column read by its type\'s parser: int8 exact, timestamptz in UTC')
  t.strictSame(first.result.fields.map(f => f.name), ['big', 'label', 'at', 'none'], 'the result keeps the row description')
  t.strictSame(first.query.shape?.make(first.result.rows[0] as unknown[]), { big: '9007199254740993', label: 'a', at: '2024-05-01T10:00:00.000Z', none: null })

  const connection = (client as unknown as { connection: EventEmitter & { parsedStatements: Record<string, string> } }).connection
  let descriptions = 0
  connection.on('rowDescription', () => { descriptions++ })
  const again = await run(text, ['1', 'b'], 'pg-query-test')
  t.equal(again.query.shape, first.query.shape, 'the prepared statement\'s second answer reuses the shape')
  t.strictSame(again.result.rows, [[1, 'b', '2024-05-01T10:00:00.000Z', null]], 'int8 within ±2^53 − 1 read as a number')
  t.equal(descriptions, 0, 'and comes without a row description: the connection described it once')

  const unserializable = { toPostgres: () => { throw new Error('not a value') } }
  await t.rejects(run(text, [unserializable, 'x'], 'pg-query-test'), /not a value/, 'a value pg cannot serialize fails the query')
  t.strictSame((await run(text, ['3', 'y'], 'pg-query-test')).result.rows, [[3, 'y', '2024-05-01T10:00:00.000Z', null]], 'and the statement runs on')

  const retyped = await run('SELECT $1::int4 AS big, $2::text AS label', [7, 'c'])
  t.not(retyped.query.shape, first.query.shape, 'another column list, another shape')
  t.strictSame(retyped.result.rows, [[7, 'c']], 'int4 read as a number')

  // A name is one text per connection: another connection may give it another column list.
  const other = new pg.Client({ connectionString: TEST_DATABASE_URL, options: '-c TimeZone=UTC', types })
  await other.connect()
  t.teardown(() => other.end())
  const renamed = await run('SELECT $1::text AS label, 5::int4 AS five', ['d'], 'pg-query-test', other)
  t.strictSame(renamed.result.rows, [['d', 5]], 'a name answering with other columns is read with its own parsers')
  t.strictSame(renamed.query.shape?.make(renamed.result.rows[0] as unknown[]), { label: 'd', five: 5 })
  const back = await run(text, ['2', 'e'], 'pg-query-test')
  t.strictSame(back.result.rows, [[2, 'e', '2024-05-01T10:00:00.000Z', null]], 'and the first connection\'s statement still reads its own')
  t.equal(back.query.shape, first.query.shape, 'with the shape of its column list')

  // pg forgets a statement (the server dropped it): the name is parsed again, here for another
  // text, and described again.
  await client.query('DEALLOCATE "pg-query-test"')
  delete connection.parsedStatements['pg-query-test']
  descriptions = 0
  const reparsed = await run('SELECT $1::text AS word', ['f'], 'pg-query-test')
  t.strictSame(reparsed.result.rows, [['f']], 'a name parsed again is described again')
  t.strictSame(reparsed.query.shape?.make(reparsed.result.rows[0] as unknown[]), { word: 'f' })
  t.strictSame((await run('SELECT $1::text AS word', ['g'], 'pg-query-test')).result.rows, [['g']], 'and read with its new shape after')
  t.equal(descriptions, 1, 'one description for the new text')

  // The parsers come from the query's type set: the same statement run with another set on the
  // same connection is described again and read with that set's parsers, and then the first
  // set's queries are read with theirs again.
  const numbers = new pg.TypeOverrides()
  numbers.setTypeParser(OID.int8, (text: string) => Number(text) * 10)
  const typed = 'SELECT $1::int8 AS big'
  t.strictSame((await run(typed, ['4'], 'pg-query-types')).result.rows, [[4]], 'int8 as the first set reads it (parseInt8)')
  descriptions = 0
  const otherSet = await run(typed, ['4'], 'pg-query-types', client, numbers)
  t.strictSame(otherSet.result.rows, [[40]], 'the same statement with another type set is read with its parsers')
  t.equal(otherSet.query.shape?.types, numbers, 'in a shape made for that set')
  t.equal(descriptions, 1, 'which the connection asked for again')
  t.strictSame((await run(typed, ['5'], 'pg-query-types')).result.rows, [[5]], 'and the first set reads its own again')
  t.equal(descriptions, 2, 'after asking once more')

  const none = await run('CREATE TEMP TABLE pg_query_test (x int)')
  t.equal(none.query.shape, undefined, 'a statement without rows has no shape')
  t.strictSame(none.result.rows, [])

  await t.rejects(run('SELECT 1/0'), { code: '22012' }, 'an error reaches the callback')
  t.strictSame((await run('SELECT 2 AS two')).result.rows, [[2]], 'and the connection goes on')
})
