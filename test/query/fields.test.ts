import t from 'tap'
import { Type } from '@sinclair/typebox'
import { createFieldMap, fieldsFromSchema, pathDepth, readPath } from '../../model/fields.js'
import type { FieldInit } from '../../model/fields.js'
import { DocumentSchema, SORTABLE, fields } from './fixtures.js'

t.test('pathDepth', async (t) => {
  const cases: Array<[string, number]> = [
    ['a', 1], ['aB_1', 1], ['_x', 1], ['a.b', 2], ['metadata.source.system', 3], ['a.b.c.d', 4],
    ['', 0], ['1a', 0], ['a.', 0], ['.a', 0], ['a..b', 0], ['a-b', 0], ['a.1b', 0], ['é', 0], ['a b', 0]
  ]
  for (const [path, depth] of cases) t.equal(pathDepth(path), depth, path)
})

t.test('createFieldMap fills defaults and refuses bad descriptors at setup', async (t) => {
  const values = ['A', 'B']
  const map = createFieldMap([
    { path: 'name', type: 'string' },
    { path: 'kind', type: 'enum', enumValues: values, nullable: true, filterable: false, sortable: true }
  ])
  t.strictSame(map.get('name'), { path: 'name', type: 'string', nullable: false, filterable: true, sortable: false, ordered: true })
  t.strictSame(map.get('kind'), { path: 'kind', type: 'enum', nullable: true, filterable: false, sortable: true, ordered: true, enumValues: ['A', 'B'] })
  values.push('C')
  t.strictSame(map.get('kind')?.enumValues, ['A', 'B'], 'enum values are copied')

  const bad: Array<[FieldInit[], string]> = [
    [[{ path: 'a.b.c.d', type: 'string' }], 'query fields: path must be a name of at most 3 period-separated levels, got "a.b.c.d"'],
    [[{ path: 'a-b', type: 'string' }], 'query fields: path must be a name of at most 3 period-separated levels, got "a-b"'],
    [[{ path: 'a', type: 'string' }, { path: 'a', type: 'int32' }], 'query fields: path a is listed twice'],
    [[{ path: 'a', type: 'float' as 'string' }], 'query fields: a.type must be a field type, got "float"'],
    [[{ path: 'a', type: 'enum' }], "query fields: a.enumValues must list the enum's values"],
    [[{ path: 'a', type: 'enum', enumValues: [] }], "query fields: a.enumValues must list the enum's values"],
    [[{ path: 'a', type: 'string-array', sortable: true }], 'query fields: a is an array and cannot be sortable'],
    [[{ path: 'a', type: 'int32', ordered: false }], 'query fields: a.ordered may be false on a string field only'],
    [[{ path: 'a', type: 'string', ordered: false, sortable: true }], 'query fields: a has no meaningful order and cannot be sortable']
  ]
  for (const [inits, message] of bad) t.throws(() => createFieldMap(inits), new TypeError(message), message)
})

t.test('readPath reads API-shaped objects; anything absent is null', async (t) => {
  const item = { a: 1, n: null, m: { s: { x: 'v', z: undefined }, t: 'text' } }
  const cases: Array<[string, unknown]> = [
    ['a', 1], ['n', null], ['missing', null], ['m.s.x', 'v'], ['m.s.z', null], ['m.s.y', null], ['n.s.x', null], ['m.t.x', null], ['m.q.x', null]
  ]
  for (const [path, value] of cases) t.equal(readPath(item, path), value, path)
})

t.test('fieldsFromSchema derives the same map as the hand-written one', async (t) => {
  t.strictSame([...fieldsFromSchema(DocumentSchema, { sortable: SORTABLE }).entries()], [...fields.entries()])
})

t.test('fieldsFromSchema reads the shapes JSON Schema and TypeBox write', async (t) => {
  const schema = Type.Object({
    id: Type.String(),
    nullableText: Type.Unsafe<string | null>({ type: ['string', 'null'] }),
    kind: Type.Unsafe<string>({ type: 'string', enum: ['A', 'B'] }),
    only: Type.Literal('X'),
    big: Type.Integer({ format: 'int64' }),
    kinds: Type.Array(Type.Union([Type.Literal('A'), Type.Literal('B')])),
    maybeTags: Type.Union([Type.Array(Type.String()), Type.Null()]),
    a: Type.Object({ b: Type.Object({ c: Type.Object({ d: Type.String() }), e: Type.Boolean() }) }),
    // not filterable: numbers, arrays of objects or of nullable strings, mixed unions, bare objects, odd enums
    ratio: Type.Number(),
    pages: Type.Array(Type.Object({ n: Type.Integer() })),
    loose: Type.Array(Type.Union([Type.String(), Type.Null()])),
    anyArray: Type.Unsafe({ type: 'array' }),
    either: Type.Union([Type.String(), Type.Integer()]),
    twoTypes: Type.Unsafe({ type: ['string', 'integer'] }),
    bag: Type.Unsafe({ type: 'object' }),
    numbers: Type.Unsafe({ type: 'string', enum: [1, 2] }),
    nothing: Type.Null(),
    maybeRatio: Type.Union([Type.Number(), Type.Null()]),
    wrapped: Type.Union([Type.Unsafe<string | null>({ type: ['string', 'null'] })]),
    open: Type.Unsafe({ type: 'object', properties: { inner: { type: 'string' } } }),
    // text without a meaningful text order: filterable by equality, never by range or in ordering
    keep: Type.String({ format: 'duration' }),
    window: Type.Union([Type.String({ format: 'interval' }), Type.Null()]),
    schedule: Type.String({ format: 'cron' })
  })
  const map = fieldsFromSchema(schema)
  const summary = [...map.values()].map((f) => `${f.path}:${f.type}${f.nullable ? '?' : ''}${f.ordered ? '' : '~'}${f.enumValues === undefined ? '' : `[${f.enumValues.join('|')}]`}`)
  t.strictSame(summary, ['id:string', 'nullableText:string?', 'kind:enum[A|B]', 'only:enum[X]', 'big:int64', 'kinds:string-array', 'maybeTags:string-array?', 'a.b.e:boolean', 'wrapped:string?', 'open.inner:string?', 'keep:string~', 'window:string?~', 'schedule:string~'])
  t.throws(() => fieldsFromSchema(schema, { sortable: ['keep'] }), new TypeError('query fields: keep has no meaningful order and cannot be sortable'))
})

t.test('fieldsFromSchema options', async (t) => {
  const schema = Type.Object({ id: Type.String(), ref: Type.String(), name: Type.String(), size: Type.Integer() })
  const noRef = (path: string): boolean => path !== 'ref'

  const picked = fieldsFromSchema(schema, { filterable: ['name'], sortable: ['size'], queryable: noRef })
  t.strictSame([...picked.values()].map((f) => [f.path, f.filterable, f.sortable]), [['id', false, false], ['name', true, false], ['size', false, true]])
  t.strictSame([...fieldsFromSchema(schema, { queryable: noRef }).keys()], ['id', 'name', 'size'], 'a path that cannot be queried is left out by default')
  t.strictSame([...fieldsFromSchema(schema, { idField: 'name', filterable: [] }).keys()], ['name'])

  const bad: Array<[object, Parameters<typeof fieldsFromSchema>[1], string]> = [
    [Type.String(), {}, 'fieldsFromSchema: schema must be an object schema with properties'],
    [schema, { filterable: ['nope'] }, 'fieldsFromSchema: filterable lists "nope", which is not a filterable path of the schema'],
    [schema, { sortable: ['name', 'nope'] }, 'fieldsFromSchema: sortable lists "nope", which is not a filterable path of the schema'],
    [schema, { idField: 'uuid' }, 'fieldsFromSchema: idField "uuid" is not a property of the schema'],
    [schema, { queryable: () => false }, 'fieldsFromSchema: queryable() is false for "id", which is the id or listed'],
    [schema, { filterable: ['ref'], queryable: noRef }, 'fieldsFromSchema: queryable() is false for "ref", which is the id or listed'],
    [schema, { sortable: ['ref'], queryable: noRef }, 'fieldsFromSchema: queryable() is false for "ref", which is the id or listed']
  ]
  for (const [s, options, message] of bad) t.throws(() => fieldsFromSchema(s, options), new TypeError(message), message)
})
