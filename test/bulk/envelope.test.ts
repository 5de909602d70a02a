import t, { type Test } from 'tap'
import fc from 'fast-check'
import { duplicateIds, outsideEntities, type RawOperation } from '../../plugins/bulk/envelope.js'
import { pglite } from '../support/databases.js'
import { api, build, count, json, leaksNothing, token, type Json } from './helper.js'

// Request-level refusals (conventions: "Bulk request body", "Bulk endpoint", "Bulk errors"):
// a 400 "Invalid Data" problem with context items, and nothing stored.

const author = (i = 0): Json => ({ action: 'CREATE', entity: { name: `A${i}`, email: 'a@example.com' } })

t.test('request-level problems', async t => {
  const store = await pglite.create(t)
  const app = await build(t, store, { resources: { documents: { maxOperations: 3, actions: ['CREATE', 'DELETE'] } } })
  const { bulk } = api(app)

  async function refused (t: Test, collection: string, body: unknown, extra?: Record<string, string>): Promise<Json> {
    const res = await bulk(collection, body, extra)
    t.equal(res.statusCode, 400, res.body)
    t.match(res.headers['content-type'], /^application\/problem\+json/)
    const problem = json(res)
    t.equal(problem.title, 'Invalid Data')
    t.equal(problem.status, 400)
    t.type(problem.requestId, 'string')
    t.ok(leaksNothing(res.body))
    return problem
  }

  const cases: Array<[string, unknown, Json[]]> = [
    // The body as a whole is the field `$` (JSONPath's root), as on every route.
    ['a body that is an array', [author()], [{ code: 'INPUT_INVALID', message: 'must be a JSON object with an operations array', field: '$', source: 'body' }]],
    ['a body that is null', 'null', [{ code: 'INPUT_NULL', message: 'must be a JSON object with an operations array', field: '$' }]],
    ['a body that is a string', '"ops"', [{ code: 'INPUT_INVALID', field: '$', value: 'ops' }]],
    ['no operations', {}, [{ code: 'INPUT_NULL', field: 'operations', source: 'body' }]],
    ['operations not an array', { operations: { 0: author() } }, [{ code: 'INPUT_INVALID', field: 'operations' }]],
    ['empty operations', { operations: [] }, [{ code: 'INPUT_EMPTY', field: 'operations' }]],
    ['an unknown transactionMode', { transactionMode: 'atomic', operations: [author()] }, [{ code: 'INPUT_INVALID', field: 'transactionMode', value: 'atomic' }]],
    ['an unknown action', { operations: [author(), { action: 'UPSERT', entity: {} }] }, [{ code: 'INPUT_INVALID', field: 'operations[1].action', value: 'UPSERT', message: /CREATE, UPDATE, CREATE_UPDATE, DELETE/ }]],
    ['a missing action', { operations: [{ entity: {} }] }, [{ code: 'INPUT_NULL', field: 'operations[0].action' }]],
    // Reference service, Bulk: an operation without an entity object is not the bulk shape.
    ['a missing entity', { operations: [author(), { action: 'CREATE' }] }, [{ code: 'INPUT_NULL', field: 'operations[1].entity' }]],
    ['an entity that is null', { operations: [author(), { action: 'DELETE', entity: null }] }, [{ code: 'INPUT_NULL', field: 'operations[1].entity' }]],
    ['an entity that is text', { operations: [{ action: 'UPDATE', ifMatch: '"x"', entity: 'text' }] }, [{ code: 'INPUT_INVALID', field: 'operations[0].entity' }]],
    ['an entity that is a list', { operations: [{ action: 'CREATE', entity: [author().entity] }] }, [{ code: 'INPUT_INVALID', field: 'operations[0].entity' }]],
    ['an unknown member of the body', { operations: [author()], mode: 'ATOMIC' }, [{ code: 'INPUT_INVALID', field: 'mode', message: 'is not allowed here' }]],
    ['an unknown member of an operation', { operations: [{ ...author(), ifmatch: '"x"' }] }, [{ code: 'INPUT_INVALID', field: 'operations[0].ifmatch' }]],
    ['an operationId that is not a string', { operations: [{ ...author(), operationId: 7 }] }, [{ code: 'INPUT_INVALID', field: 'operations[0].operationId' }]],
    ['an empty operationId', { operations: [{ ...author(), operationId: '' }] }, [{ code: 'INPUT_BLANK', field: 'operations[0].operationId' }]],
    ['an ifMatch that is not a string', { operations: [{ ...author(), ifMatch: 1 }] }, [{ code: 'INPUT_INVALID', field: 'operations[0].ifMatch' }]]
  ]
  for (const [name, body, context] of cases) {
    t.test(name, async t => {
      const problem = await refused(t, 'authors', body)
      t.match(problem.context, context)
      t.equal(problem.context.length, context.length, JSON.stringify(problem.context))
    })
  }

  t.test('one operation without the bulk shape: nothing of the others is applied, ATOMIC or not', async t => {
    for (const transactionMode of ['ISOLATED', 'ATOMIC']) {
      const before = await count(store, 'authors')
      const problem = await refused(t, 'authors', { transactionMode, operations: [author(1), author(2), { action: 'CREATE_UPDATE' }] })
      t.match(problem.context, [{ code: 'INPUT_NULL', field: 'operations[2].entity' }])
      t.equal(await count(store, 'authors'), before, `${transactionMode}: nothing stored`)
    }
  })

  t.test('more operations than the maximum: the detail states the maximum', async t => {
    const operations = Array.from({ length: 101 }, (_, i) => author(i))
    const problem = await refused(t, 'authors', { operations })
    t.match(problem.detail, /at most 100 operations, and this one has 101/)
    t.match(problem.context, [{ code: 'INPUT_MAX_VALUE', field: 'operations', message: 'must hold at most 100 operations', value: '101' }], 'worded as every over-long request is, whatever check found it')
    t.equal(await count(store, 'authors'), 0, 'nothing stored')
    t.equal((await bulk('authors', { operations: operations.slice(1) })).statusCode, 200, 'exactly the maximum is processed')
  })

  t.test('a per-endpoint maximum and action subset', async t => {
    const docs = Array.from({ length: 4 }, () => ({ action: 'DELETE', ifMatch: '"x"', entity: { id: crypto.randomUUID() } }))
    const problem = await refused(t, 'documents', { operations: docs })
    t.match(problem.detail, /at most 3 operations, and this one has 4/)
    const update = await refused(t, 'documents', { operations: [{ action: 'UPDATE', ifMatch: '"x"', entity: { id: 'x' } }] })
    t.match(update.context, [{ code: 'INPUT_INVALID', field: 'operations[0].action', message: 'must be one of CREATE, DELETE' }])
  })

  t.test('the same id twice: the detail names the id and the operations', async t => {
    const op = (id: string): Json => ({ action: 'DELETE', entity: { id } })
    const problem = await refused(t, 'authors', { operations: [op('a'), op('b'), op('a'), op('c'), op('b'), op('a')] })
    t.equal(problem.detail, "The entity id 'a' appears in operations 0, 2 and 5; 'b' appears in operations 1 and 4; an entity may appear only once in a bulk request, so send one operation per id.")
    t.strictSame(problem.context.map((i: Json) => [i.code, i.field, i.value]), [
      ['DUPLICATE_ID', 'operations[2].entity.id', 'a'],
      ['DUPLICATE_ID', 'operations[5].entity.id', 'a'],
      ['DUPLICATE_ID', 'operations[4].entity.id', 'b']
    ])
    t.match(problem.context[0].message, 'repeats the id of operations[0]')
  })

  t.test('an id repeated across actions counts too, a CREATE with an id included', async t => {
    const problem = await refused(t, 'authors', { operations: [{ action: 'CREATE', entity: { id: 'x', name: 'A', email: 'a@example.com' } }, { action: 'UPDATE', entity: { id: 'x', name: 'B', email: 'b@example.com' } }] })
    t.match(problem.detail, "'x' appears in operations 0 and 1")
  })

  t.test('a merge-patch body is not a bulk request: 415', async t => {
    const res = await bulk('authors', { operations: [author()] }, { 'content-type': 'application/merge-patch+json' })
    t.equal(res.statusCode, 415)
  })

  t.test('If-Match on the collection cannot hold: 412, nothing stored', async t => {
    const before = await count(store, 'authors')
    for (const h of [{ 'if-match': '"abc"' }, { 'if-match': 'W/"abc"' }, { 'if-none-match': '*' }] as Array<Record<string, string>>) {
      const res = await bulk('authors', { operations: [author()] }, h)
      t.equal(res.statusCode, 412, JSON.stringify(h))
      t.match(json(res).detail, 'operations[].ifMatch')
      t.equal(json(res).instance, '/v1/authors')
    }
    t.equal(await count(store, 'authors'), before)
    t.equal((await bulk('authors', { operations: [author()] }, { 'if-match': '*' })).statusCode, 200, 'If-Match: * holds: the collection exists')
    t.equal((await bulk('authors', { operations: [author()] }, { 'if-none-match': '"abc"' })).statusCode, 200, 'If-None-Match with tags holds')
    t.equal((await bulk('authors', { operations: [author()] }, { 'if-match': 'abc' })).statusCode, 400, 'a malformed header is a 400')
  })

  t.test('authentication and scopes of the resource', async t => {
    const none = await app.inject({ method: 'PATCH', url: '/v1/authors', headers: { 'user-agent': 'bulk-tests/1', 'content-type': 'application/json' }, payload: { operations: [author()] } })
    t.equal(none.statusCode, 401)
    const readOnly = await app.inject({
      method: 'PATCH',
      url: '/v1/authors',
      headers: { 'user-agent': 'bulk-tests/1', 'content-type': 'application/json', authorization: `Bearer ${token('u', ['authors:read', 'documents:write'])}` },
      payload: { operations: [author()] }
    })
    t.equal(readOnly.statusCode, 403)
  })

  t.test('OPTIONS lists PATCH on the collection', async t => {
    const res = await app.inject({ method: 'OPTIONS', url: '/v1/authors', headers: { 'user-agent': 'bulk-tests/1' } })
    t.match(res.headers.allow, /PATCH/)
  })
})

t.test('duplicateIds: a problem exactly when an id repeats, one item per repeat', async t => {
  const op = fc.record({
    action: fc.constantFrom('CREATE', 'UPDATE', 'CREATE_UPDATE', 'DELETE'),
    // Always an object: the envelope's check runs first.
    entity: fc.record({ id: fc.oneof(fc.constantFrom('a', 'b', 'c', 'd'), fc.integer()) }, { requiredKeys: [] })
  })
  t.doesNotThrow(() => fc.assert(fc.property(fc.array(op, { maxLength: 12 }), (ops) => {
    const ids = ops.map(o => (o.entity as { id?: unknown }).id).filter((id): id is string => typeof id === 'string')
    const repeats = ids.length - new Set(ids).size
    const problem = duplicateIds(ops as RawOperation[])
    if (repeats === 0) return problem === null
    return problem !== null && problem.statusCode === 400 && problem.context?.length === repeats &&
      problem.context.every(i => i.code === 'DUPLICATE_ID' && ids.includes(i.value as string))
  })))
})

t.test('outsideEntities: what the envelope\'s U+0000 scan sees, with the body\'s paths', async t => {
  const cases: Array<[string, unknown, unknown]> = [
    ['entities dropped, the rest kept', { transactionMode: 'ATOMIC', operations: [{ action: 'CREATE', entity: { name: 'a' } }, { operationId: 'x', action: 'DELETE', ifMatch: '"1"', entity: { id: 'b' } }] }, { transactionMode: 'ATOMIC', operations: [{ action: 'CREATE' }, { operationId: 'x', action: 'DELETE', ifMatch: '"1"' }] }],
    ['operations that are not objects stay as sent', { operations: [1, null, 'op', [{ entity: 'e' }]] }, { operations: [1, null, 'op', [{ entity: 'e' }]] }],
    ['no operations array: the body as sent', { operations: 'none' }, { operations: 'none' }],
    ['a body that is not an object', null, null],
    ['an array body', [{ entity: 'e' }], [{ entity: 'e' }]]
  ]
  for (const [name, body, seen] of cases) t.strictSame(outsideEntities(body), seen, name)
  const body = { operations: [{ action: 'CREATE', entity: { name: 'a' } }] }
  outsideEntities(body)
  t.strictSame(body, { operations: [{ action: 'CREATE', entity: { name: 'a' } }] }, 'the body itself is not changed')
})
