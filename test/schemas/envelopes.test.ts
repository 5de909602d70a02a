import t from 'tap'
import fc from 'fast-check'
import { Type, type Static } from '@sinclair/typebox'
import { auditProperties, standardProperties } from '../../schemas/standard.js'
import { Collection, CursorCollection, CursorPaging, OffsetCollection, OffsetPaging } from '../../schemas/collection.js'
import { BULK_ACTIONS, BulkAction, BulkOperation, BulkOperationResult, BulkRequest, BulkRequestOf, BulkResponse, ENTITY_TAGS_PATTERN, TransactionMode } from '../../schemas/bulk.js'
import { parseEntityTags } from '../../plugins/conditional/entity-tags.js'
import { assertType, makeAjv, type Equal } from './helper.js'

const ajv = makeAjv()
function errors (schema: object, value: unknown): string[] {
  const validate = ajv.compile(schema)
  return validate(value) ? [] : (validate.errors ?? []).map(e => `${e.instancePath} ${e.keyword}`)
}

const Author = Type.Object({
  id: standardProperties.id,
  ref: standardProperties.ref('author'),
  name: standardProperties.name,
  ...auditProperties,
  etag: standardProperties.etag
})
const author = {
  id: 'a1',
  ref: 'svc:author::a1',
  name: 'Ada',
  createdDateTime: '2024-05-01T12:00:00.000Z',
  createdBy: 'user|1',
  modifiedDateTime: '2024-05-01T12:00:00.000Z',
  modifiedBy: 'user|1',
  etag: '"1"'
}

t.test('standard properties compose into an entity; audit fields are read-only', async t => {
  t.strictSame(errors(Author, author), [])
  t.strictSame(errors(Author, { ...author, ref: 'svc:document::a1' }), ['/ref pattern'])
  t.strictSame(errors(Author, { ...author, createdDateTime: '2024-05-01' }), ['/createdDateTime minLength', '/createdDateTime format'])
  for (const key of ['createdDateTime', 'createdBy', 'modifiedDateTime', 'modifiedBy', 'etag', 'ref'] as const) {
    t.equal(Author.properties[key].readOnly, true, `${key} is read-only`)
  }
  t.equal(standardProperties.deletedBy.readOnly, true)
  t.notOk(standardProperties.id.readOnly, 'id is writable where the resource allows it (PUT on a new id)')
  t.match(standardProperties.ref('document', { subEntity: 'page' }), { pattern: '^svc:document:page:[A-Za-z0-9._~-]+$', readOnly: true })
  t.match(standardProperties.orgRef, { pattern: '^svc:org::[A-Za-z0-9._~-]+$' })
  t.match(standardProperties.name, { minLength: 1, maxLength: 200 })
  t.match(standardProperties.description, { minLength: 0, maxLength: 2000 })
  t.strictSame(errors(standardProperties.orgId, '123e4567-e89b-42d3-a456-426614174000'), [])
  t.strictSame(errors(standardProperties.fingerprint, 'sha256:abc'), [])
  t.strictSame(errors(standardProperties.requestId, ''), [' minLength'])
  assertType<Equal<Static<typeof Author>, {
    id: string, ref: string, name: string, createdDateTime: string, createdBy: string, modifiedDateTime: string, modifiedBy: string, etag: string
  }>>()
})

t.test('cursor paging: limit, next and previous required, each {cursor, url} or null', async t => {
  const first = { limit: 20, next: { cursor: 'YWJj', url: 'https://api.example.com/v1/authors?limit=20&cursor=YWJj' }, previous: null }
  t.strictSame(errors(CursorPaging, first), [])
  t.strictSame(errors(CursorPaging, { limit: 20, next: null, previous: null }), [])
  t.strictSame(errors(CursorPaging, { limit: 20, next: null }), [' required'], 'previous is required even when null')
  t.strictSame(errors(CursorPaging, { ...first, next: { url: 'x' } }), ['/next required'])
  t.strictSame(errors(CursorPaging, { ...first, limit: 0 }), ['/limit minimum'])
  t.strictSame(errors(CursorPaging, { ...first, offset: 0 }), [' additionalProperties'], 'the shapes stay apart')
  assertType<Equal<Static<typeof CursorPaging>, {
    limit: number, next: { cursor: string, url: string } | null, previous: { cursor: string, url: string } | null
  }>>()
})

t.test('offset paging: limit and offset required; totalCount, next and previous optional', async t => {
  t.strictSame(errors(OffsetPaging, { limit: 20, offset: 0 }), [])
  t.strictSame(errors(OffsetPaging, { totalCount: 3, limit: 20, offset: 40, next: null, previous: { url: '/v1/authors?offset=20' } }), [])
  t.strictSame(errors(OffsetPaging, { limit: 20 }), [' required'])
  t.strictSame(errors(OffsetPaging, { limit: 20, offset: -1 }), ['/offset minimum'])
  t.strictSame(errors(OffsetPaging, { limit: 20, offset: 0, next: { cursor: 'x', url: 'y' } }), ['/next additionalProperties'])
  assertType<Equal<Static<typeof OffsetPaging>, {
    totalCount?: number, limit: number, offset: number, next?: { url: string } | null, previous?: { url: string } | null
  }>>()
})

t.test('collections: results plus paging, never a bare array', async t => {
  const cursorPage = { results: [author], paging: { limit: 20, next: null, previous: null } }
  const offsetPage = { results: [], paging: { limit: 20, offset: 0, totalCount: 0 } }
  t.strictSame(errors(CursorCollection(Author), cursorPage), [])
  t.strictSame(errors(CursorCollection(Author), offsetPage).length > 0, true)
  t.strictSame(errors(OffsetCollection(Author), offsetPage), [])
  t.strictSame(errors(Collection(Author), cursorPage), [])
  t.strictSame(errors(Collection(Author), offsetPage), [])
  t.strictSame(errors(Collection(Author), { results: [author] }), [' required'])
  t.strictSame(errors(Collection(Author), [author]), [' type'])
  t.strictSame(CursorCollection(Author, { description: 'Authors' }).description, 'Authors')
  const page = CursorCollection(Author)
  t.equal(page.properties.results.type, 'array')
  assertType<Equal<Static<typeof page>['results'], Array<Static<typeof Author>>>>()
})

const Entity = Type.Object({ id: Type.Optional(Type.String()), name: Type.String() })

t.test('bulk request: operations 1..maxOperations, the actions offered, transactionMode defaulting to ISOLATED', async t => {
  const body = BulkRequest(Entity, { maxOperations: 2 })
  const ok = { operations: [{ action: 'CREATE', entity: { name: 'a' } }, { operationId: null, action: 'DELETE', ifMatch: '"1"', entity: { id: '1', name: 'b' } }] }
  t.strictSame(errors(body, ok), [])
  t.equal((ok as Record<string, unknown>).transactionMode, 'ISOLATED', 'the default is filled in by an Ajv with useDefaults')
  t.strictSame(errors(body, { operations: [] }), ['/operations minItems'])
  t.strictSame(errors(body, { operations: [...ok.operations, ...ok.operations] }), ['/operations maxItems'])
  t.strictSame(errors(body, { transactionMode: 'SOMETIMES', operations: [{ action: 'MERGE', entity: {} }] }).sort(),
    ['/operations/0/action enum', '/operations/0/entity required', '/transactionMode enum'])
  t.strictSame(errors(body, { operations: [{ action: 'CREATE', entity: { name: 'a' }, extra: 1 }] }), ['/operations/0 additionalProperties'])
  t.equal(BulkRequest(Entity).properties.operations.maxItems, 100, 'default maximum 100')
  const createOnly = BulkRequest(Entity, { actions: ['CREATE', 'UPDATE'] })
  t.strictSame(errors(createOnly, { operations: [{ action: 'DELETE', entity: { name: 'a' } }] }), ['/operations/0/action enum'])
  assertType<Equal<Static<typeof createOnly>['operations'][number]['action'], 'CREATE' | 'UPDATE'>>()
  assertType<Equal<Static<typeof body>['operations'][number], {
    operationId?: string | null, action: 'CREATE' | 'UPDATE' | 'CREATE_UPDATE' | 'DELETE', ifMatch?: string | null, entity: { id?: string, name: string }
  }>>()
  for (const bad of [0, 1.5, -1, '10']) {
    t.throws(() => BulkRequest(Entity, { maxOperations: bad as number }), { name: 'TypeError', message: /^BulkRequest: maxOperations must be a positive integer, got / })
  }
  for (const bad of [[], ['MERGE'], ['CREATE', 'CREATE'], 'CREATE']) {
    t.throws(() => BulkRequest(Entity, { actions: bad as never }), { name: 'TypeError', message: /^BulkRequest: actions must be a non-empty subset/ }, JSON.stringify(bad))
  }
  t.strictSame(BulkAction.enum, [...BULK_ACTIONS])
  t.strictSame(TransactionMode.enum, ['ATOMIC', 'ISOLATED'])
})

t.test('bulk response: exactly the convention fields, not extensible', async t => {
  const response = {
    status: 'PARTIAL',
    operations: [
      { operationId: '0', action: 'CREATE', entityId: 'a1', entityRef: 'svc:author::a1', result: { status: 'SUCCEEDED' } },
      { operationId: 'mine', action: 'UPDATE', entityId: null, result: { status: 'FAILED', detail: 'Name taken', context: [{ message: 'must be unique', code: 'UNIQUE_NAME_VIOLATION', field: 'name', value: null }] } }
    ]
  }
  t.strictSame(errors(BulkResponse, response), [])
  t.strictSame(errors(BulkResponse, { ...response, status: 'DONE' }), ['/status enum'])
  t.strictSame(errors(BulkResponse, { ...response, extra: 1 }), [' additionalProperties'])
  t.strictSame(errors(BulkOperationResult, { operationId: '0', action: 'CREATE', result: { status: 'PARTIAL' } }), ['/result/status enum'], 'an operation is SUCCEEDED or FAILED')
  t.strictSame(errors(BulkOperationResult, { operationId: '0', action: 'CREATE', result: { status: 'FAILED', context: [{ code: 'X' }] } }), ['/result/context/0 required'])
  t.strictSame(errors(BulkOperationResult, { action: 'CREATE', result: { status: 'FAILED', extra: 1 } }).sort(), [' required', '/result additionalProperties'])
  assertType<Equal<Static<typeof BulkResponse>['status'], 'SUCCEEDED' | 'FAILED' | 'PARTIAL'>>()
  assertType<Equal<Static<typeof BulkOperationResult>['result']['status'], 'SUCCEEDED' | 'FAILED'>>()
})

t.test('bulk operation shapes: actions, a required ifMatch, a union of shapes in BulkRequestOf', async t => {
  const remove = BulkOperation(Type.Object({ id: Type.String() }), { actions: ['DELETE'], ifMatchRequired: true, description: 'DELETE: by id.' })
  const create = BulkOperation(Entity, { actions: ['CREATE'] })
  const body = BulkRequestOf(Type.Union([create, remove]), { maxOperations: 3 })
  t.strictSame(errors(body, { operations: [{ action: 'DELETE', ifMatch: '"1"', entity: { id: '1' } }, { action: 'CREATE', entity: { name: 'a' } }] }), [])
  t.ok(errors(body, { operations: [{ action: 'DELETE', entity: { id: '1' } }] }).includes('/operations/0 required'), 'ifMatch required by that shape')
  t.ok(errors(body, { operations: [{ action: 'DELETE', ifMatch: null, entity: { id: '1' } }] }).length > 0, 'and not null')
  t.ok(errors(body, { operations: [{ action: 'CREATE', entity: { id: '1' } }] }).length > 0, 'each action with its own entity')
  t.equal(remove.description, 'DELETE: by id.')
  t.equal(BulkOperation(Entity).properties.action.enum.length, 4, 'all four actions by default')
  t.throws(() => BulkOperation(Entity, { actions: [] as never }), { name: 'TypeError', message: /^BulkOperation: actions must be a non-empty subset/ })
  t.throws(() => BulkRequestOf(create, { maxOperations: 0 }), { name: 'TypeError', message: /^BulkRequest: maxOperations must be a positive integer/ })
})

t.test('ifMatch: the pattern takes what the If-Match parser takes', async t => {
  const pattern = new RegExp(ENTITY_TAGS_PATTERN, 'u')
  const chars = fc.string({ unit: fc.constantFrom('"', 'W', '/', ',', ' ', '\t', '*', 'a', 'é', '\u0100', '\\'), maxLength: 16 })
  const tag = fc.tuple(fc.boolean(), fc.string({ unit: fc.constantFrom('a', 'Z', '0', '!', '#', '~', 'é', ' '), maxLength: 4 })).map(([weak, s]) => `${weak ? 'W/' : ''}"${s}"`)
  const list = fc.tuple(fc.array(tag, { minLength: 1, maxLength: 3 }), fc.constantFrom(',', ', ', ' ,', ',,', ' , , ')).map(([tags, sep]) => tags.join(sep))
  const padded = fc.tuple(fc.constantFrom('', ' ', '\t', ', '), fc.oneof(list, chars, fc.constant('*')), fc.constantFrom('', ' ', ',', '\t')).map(([a, s, b]) => a + s + b)
  fc.assert(fc.property(padded, s => pattern.test(s) === (parseEntityTags(s) !== null)), { numRuns: 3000 })
})
