import t from 'tap'
import { fields } from './fixtures.js'
import { parseFilter } from '../../plugins/query/fiql-check.js'
import { compileSql, likePattern, selectStatement } from '../../store/sql-query.js'
import type { CollectionQuery, OrderingTerm } from '../../model/query.js'

const byId: OrderingTerm[] = [{ field: 'id', direction: 'asc' }]
const first = { kind: 'cursor' as const, limit: 10 }
const where = (fiql: string): [string, unknown[]] => {
  const sql = compileSql({ filter: parseFilter(fiql, fields), ordering: byId, paging: first }, fields)
  return [sql.where, sql.params]
}

t.test('likePattern escapes %, _ and \\ and joins segments with %', async (t) => {
  t.equal(likePattern(['a%b_c\\d']), 'a\\%b\\_c\\\\d')
  t.equal(likePattern(['', 'x', '']), '%x%')
  t.equal(likePattern(['', '']), '%')
  t.equal(likePattern(['😀', 'é']), '😀%é')
})

t.test('each operator compiles to bound parameters', async (t) => {
  const E = "ESCAPE E'\\\\'"
  const cases: Array<[string, string, unknown[]]> = [
    ['name==a', 't."name" = $1::text', ['a']],
    ['name!=a', '(t."name" IS NOT NULL AND t."name" <> $1::text)', ['a']],
    ['name==a*%', `t."name" COLLATE "C" LIKE $1 ${E}`, ['a%\\%']],
    ['name!=*_', `(t."name" IS NOT NULL AND t."name" COLLATE "C" NOT LIKE $1 ${E})`, ['%\\_']],
    ['pageCount=lt=5', 't."pageCount" < $1::integer', [5]],
    ['byteCount=le=9223372036854775807', 't."byteCount" <= $1::bigint', ['9223372036854775807']],
    ['amount=gt=10.25', 't."amount" > $1::numeric', ['10.25']],
    ['effectiveDate=ge=2024-02-29', 't."effectiveDate" >= $1::date', ['2024-02-29']],
    ['publishedDateTime==2024-01-01T00:00:00Z', 't."publishedDateTime" = $1::timestamptz', ['2024-01-01T00:00:00Z']],
    ['active==true', 't."active" = $1::boolean', [true]],
    ['status=lt=PUBLISHED', 't."status" COLLATE "C" < $1::text', ['PUBLISHED']],
    ['pageCount=in=(1,2)', 't."pageCount" = ANY($1::integer[])', [[1, 2]]],
    ['status=out=(DRAFT)', '(t."status" IS NOT NULL AND t."status" <> ALL($1::text[]))', [['DRAFT']]],
    ['pageCount=isnull=true', 't."pageCount" IS NULL', []],
    ['pageCount=isnull=false', 't."pageCount" IS NOT NULL', []],
    ['tags==x', '(t."tags" @> ARRAY[$1::text])', ['x']],
    ['tags!=x', '(t."tags" IS NOT NULL AND NOT (t."tags" @> ARRAY[$1::text]))', ['x']],
    ['tags=in=(x,y)', '(t."tags" && $1::text[])', [['x', 'y']]],
    ['tags=out=(x)', '(t."tags" IS NOT NULL AND NOT (t."tags" && $1::text[]))', [['x']]],
    ['name=contains=a_', `t."name" COLLATE "C" LIKE $1 ${E}`, ['%a\\_%']],
    ['name=startswithic=A', `(t."name" COLLATE "C") ILIKE $1 ${E}`, ['A%']],
    ['name=endswith=\\\\', `t."name" COLLATE "C" LIKE $1 ${E}`, ['%\\\\']],
    ['name=like=a*b', `t."name" COLLATE "C" LIKE $1 ${E}`, ['a%b']],
    ['name=notlikeic=a', `(t."name" IS NOT NULL AND (t."name" COLLATE "C") NOT ILIKE $1 ${E})`, ['a']],
    ['metadata.score==3', '((t."metadata"->>\'score\')::integer) = $1::integer', [3]],
    ['name==a;pageCount==1,active==false', '((t."name" = $1::text AND t."pageCount" = $2::integer) OR t."active" = $3::boolean)', ['a', 1, false]]
  ]
  for (const [fiql, sql, params] of cases) t.strictSame(where(fiql), [sql, params], fiql)
})

t.test('the case-insensitive operators fold under the collation given; ordering and the others keep "C"', async (t) => {
  const E = "ESCAPE E'\\\\'"
  const ordering: OrderingTerm[] = [{ field: 'name', direction: 'asc' }, { field: 'id', direction: 'asc' }]
  const filter = parseFilter('name=containsic=É;metadata.source.system=notlikeic=*É;name=like=É*', fields)
  for (const collation of ['pg_c_utf8', 'C.utf8', 'C.UTF-8'] as const) {
    const sql = compileSql({ filter, ordering, paging: first }, fields, { foldCollation: collation })
    t.equal(sql.where, `((t."name" COLLATE "${collation}") ILIKE $1 ${E} AND ` +
      `((t."metadata"->'source'->>'system') IS NOT NULL AND ((t."metadata"->'source'->>'system') COLLATE "${collation}") NOT ILIKE $2 ${E}) AND ` +
      `t."name" COLLATE "C" LIKE $3 ${E})`, collation)
    t.strictSame(sql.params, ['%É%', '%É', 'É%'], `${collation}: the values are parameters`)
    t.equal(sql.orderBy, 't."name" COLLATE "C" ASC, t."id" COLLATE "C" ASC', `${collation}: the order is code points`)
  }
})

t.test('ordering, limit and the keyset condition', async (t) => {
  const ordering: OrderingTerm[] = [{ field: 'name', direction: 'asc' }, { field: 'pageCount', direction: 'desc' }, { field: 'id', direction: 'asc' }]
  const none = compileSql({ filter: null, ordering, paging: first }, fields)
  t.strictSame(none, {
    where: 'TRUE',
    orderBy: 't."name" COLLATE "C" ASC, t."pageCount" DESC, t."id" COLLATE "C" ASC',
    limit: 'LIMIT 11',
    params: [],
    paramStart: 1,
    reversed: false,
    count: false
  })

  const next = compileSql({ filter: null, ordering, paging: { kind: 'cursor', limit: 10, cursor: { direction: 'next', values: ['n', 5, 'i'] } } }, fields)
  // The first term's redundant bound lets an index start at the boundary; non-null fields have no null branch.
  t.equal(next.where, 't."name" COLLATE "C" >= $3::text AND (t."name" COLLATE "C" > $3::text OR (t."name" COLLATE "C" = $3::text AND ' +
    '(t."pageCount" < $2::integer OR (t."pageCount" = $2::integer AND t."id" COLLATE "C" > $1::text))))')
  t.strictSame(next.params, ['i', 5, 'n'])

  // null is the greatest value: after a null ascending nothing, after a null descending every value
  const nulls = compileSql({ filter: null, ordering, paging: { kind: 'cursor', limit: 10, cursor: { direction: 'next', values: [null, null, 'i'] } } }, fields)
  t.equal(nulls.where, '(t."name" IS NULL AND (t."pageCount" IS NOT NULL OR (t."pageCount" IS NULL AND t."id" COLLATE "C" > $1::text)))')

  const previous = compileSql({ filter: parseFilter('active==true', fields), ordering, paging: { kind: 'cursor', limit: 2, cursor: { direction: 'previous', values: ['n', null, 'i'] } } }, fields, { paramStart: 3 })
  t.equal(previous.orderBy, 't."name" COLLATE "C" DESC, t."pageCount" ASC, t."id" COLLATE "C" DESC', 'a previous page reads the reversed ordering')
  t.equal(previous.reversed, true)
  t.equal(previous.where, 't."active" = $3::boolean AND t."name" COLLATE "C" <= $5::text AND (t."name" COLLATE "C" < $5::text OR (t."name" COLLATE "C" = $5::text AND ' +
    '(t."pageCount" IS NULL AND t."id" COLLATE "C" < $4::text)))')
  t.strictSame(previous.params, [true, 'i', 'n'])
  t.strictSame([previous.limit, previous.count], ['LIMIT 3', false])

  const idFirst: OrderingTerm[] = [{ field: 'id', direction: 'asc' }, { field: 'flagged', direction: 'asc' }]
  const last = compileSql({ filter: null, ordering: idFirst, paging: { kind: 'cursor', limit: 1, cursor: { direction: 'next', values: ['i', null] } } }, fields)
  t.equal(last.where, 't."id" COLLATE "C" >= $1::text AND (t."id" COLLATE "C" > $1::text OR (t."id" COLLATE "C" = $1::text AND FALSE))', 'an ordering that does not end with the id')

  const nullable: OrderingTerm[] = [{ field: 'pageCount', direction: 'asc' }, { field: 'id', direction: 'asc' }]
  const after5 = compileSql({ filter: null, ordering: nullable, paging: { kind: 'cursor', limit: 1, cursor: { direction: 'next', values: [5, 'i'] } } }, fields)
  t.equal(after5.where, '((t."pageCount" > $2::integer OR t."pageCount" IS NULL) OR (t."pageCount" = $2::integer AND t."id" COLLATE "C" > $1::text))',
    'ascending on a nullable field, nulls follow every value: no bound')

  const byName: OrderingTerm[] = [{ field: 'name', direction: 'asc' }, { field: 'id', direction: 'asc' }]
  const rows = compileSql({ filter: null, ordering: byName, paging: { kind: 'cursor', limit: 1, cursor: { direction: 'next', values: ['n', 'i'] } } }, fields)
  t.equal(rows.where, '(t."name" COLLATE "C", t."id" COLLATE "C") > ($1::text, $2::text)', 'one direction, no nulls: a row comparison an index starts at')
  t.strictSame(rows.params, ['n', 'i'])
  const back = compileSql({ filter: null, ordering: byName, paging: { kind: 'cursor', limit: 1, cursor: { direction: 'previous', values: ['n', 'i'] } } }, fields)
  t.equal(back.where, '(t."name" COLLATE "C", t."id" COLLATE "C") < ($1::text, $2::text)')

  const offset = compileSql({ filter: null, ordering: byId, paging: { kind: 'offset', limit: 5, offset: 20, totalCount: true } }, fields)
  t.equal(offset.limit, 'LIMIT 6 OFFSET 20')
  t.equal(offset.count, true, 'offset paging with totalCount counts')
})

t.test('statements', async (t) => {
  const query: CollectionQuery = { filter: parseFilter('pageCount=gt=1', fields), ordering: byId, paging: { kind: 'cursor', limit: 2, cursor: { direction: 'next', values: ['i'] } } }
  const sql = compileSql(query, fields, { paramStart: 2 })
  const parts = { from: 'docs t', where: 't."org" = $1', params: ['org-1'] }
  t.strictSame(selectStatement(sql, { ...parts, select: 't.*' }), {
    text: 'SELECT t.* FROM docs t WHERE (t."org" = $1) AND (t."pageCount" > $2::integer AND t."id" COLLATE "C" > $3::text) ORDER BY t."id" COLLATE "C" ASC LIMIT 3',
    params: ['org-1', 1, 'i']
  })
  const counted = compileSql({ ...query, paging: { kind: 'offset', limit: 2, offset: 4, totalCount: true } }, fields, { paramStart: 2 })
  t.strictSame(selectStatement(counted, { ...parts, select: 't.*' }), {
    text: 'SELECT p.*, c."$totalCount" FROM (SELECT count(*)::integer AS "$totalCount" FROM docs t WHERE (t."org" = $1) AND (t."pageCount" > $2::integer)) c ' +
      'LEFT JOIN (SELECT t.* FROM docs t WHERE (t."org" = $1) AND (t."pageCount" > $2::integer) ORDER BY t."id" COLLATE "C" ASC LIMIT 3 OFFSET 4) p ON TRUE',
    params: ['org-1', 1]
  }, 'the total count in the page\'s statement')
  const bare = compileSql({ ...query, filter: null, paging: first }, fields)
  t.strictSame(selectStatement(bare, { select: 't.id', from: 'docs t' }), { text: 'SELECT t.id FROM docs t ORDER BY t."id" COLLATE "C" ASC LIMIT 11', params: [] })
  t.throws(() => selectStatement(sql, { select: '*', from: 'docs t' }), new TypeError('sql-query: the statement brings 0 params but the query was compiled with paramStart 2'))
  t.throws(() => selectStatement(bare, { ...parts, select: '*' }), new TypeError('sql-query: the statement brings 1 params but the query was compiled with paramStart 1'))
})

t.test('programming errors are TypeErrors', async (t) => {
  const base: CollectionQuery = { filter: null, ordering: byId, paging: first }
  const cases: Array<[CollectionQuery, object, string]> = [
    [{ ...base, paging: { kind: 'cursor', limit: 0 } }, {}, 'sql-query: limit must be an integer of at least 1, got 0'],
    [{ ...base, paging: { kind: 'offset', limit: 1, offset: -1, totalCount: false } }, {}, 'sql-query: offset must be an integer of at least 0, got -1'],
    [base, { paramStart: 0 }, 'sql-query: paramStart must be an integer of at least 1, got 0'],
    [{ ...base, filter: { kind: 'cmp', field: 'nope', op: 'eq', values: ['x'], ci: false } }, {}, 'sql-query: the query names nope, which is not in the field map'],
    [{ ...base, filter: { kind: 'cmp', field: 'name', op: 'eq', values: ['x'], ci: false } }, { columns: new Map([['id', 't.id']]) }, 'sql-query: the query names name, which has no column'],
    [{ ...base, paging: { kind: 'cursor', limit: 1, cursor: { direction: 'next', values: ['a', 'b'] } } }, {}, 'sql-query: the cursor has 2 values for an ordering of 1']
  ]
  for (const [query, options, message] of cases) t.throws(() => compileSql(query, fields, options), new TypeError(message), message)
})
