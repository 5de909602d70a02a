import t from 'tap'
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import conventions from '../../plugins/conventions/index.js'
import query from '../../plugins/query/index.js'
import resource from '../../plugins/resource/index.js'
import bulk, { type BulkPluginOptions } from '../../plugins/bulk/index.js'
import { defineResource } from '../../plugins/resource/define.js'
import { pglite } from '../support/databases.js'
import { api, build, json, type Json } from './helper.js'
import { CURSOR_SECRET } from '../resource/helper.js'
import { atPointer, resolveRefs } from '../openapi/refs.js'
import { responseFor } from '../openapi/support.js'

// The plugin's options, its OpenAPI description, and the plugin with only what the resource
// plugin needs (no auth, the idempotency-key rule off): execution context `prod`, no
// createdBy, the idempotency key not read.

// One store for the file: each test's app registers its resources on it.
const store = await pglite.create(t)

t.test('options', async t => {
  async function attempt (opts: unknown, withResources = true): Promise<unknown> {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(problem)
    if (withResources) {
      await app.register(validation)
      await app.register(conventions)
      await app.register(query, { cursorSecret: CURSOR_SECRET })
      await app.register(resource, { store, resources: [(await import('../../routes/v1/authors.js')).authors], withoutAuth: true })
    }
    try {
      await app.register(bulk, opts as BulkPluginOptions)
      await app.ready()
      return null
    } catch (err) {
      return err
    }
  }

  const refused: Array<[string, unknown, RegExp]> = [
    ['an option it does not know', { store }, /^bulk plugin: .*store/],
    ['maxOperations 0', { maxOperations: 0 }, /^bulk plugin: maxOperations must be a positive integer, got 0$/],
    ['maxOperations 1.5', { maxOperations: 1.5 }, /maxOperations must be a positive integer, got 1.5/],
    ['maxOperations as text', { maxOperations: '10' }, /maxOperations must be a positive integer, got "10"/],
    ['bodyLimit 0', { bodyLimit: 0 }, /^bulk plugin: bodyLimit must be a positive integer, got 0$/],
    ['resources not an object', { resources: [] }, /^bulk plugin: resources must be an object by collection name, got \[\]$/],
    ['resources null', { resources: null }, /resources must be an object by collection name, got null/],
    ['an unknown collection', { resources: { books: false } }, /^bulk plugin: resources.books must be a served collection \(authors\), got "books"$/],
    ['a collection set to true', { resources: { authors: true } }, /resources.authors must be false or \{ maxOperations\?, maxAsyncOperations\?, actions\? \}, got true/],
    ['a collection set to null', { resources: { authors: null } }, /resources.authors must be false or/],
    ['a collection set to a function', { resources: { authors: () => ({}) } }, /resources.authors must be false or \{ maxOperations\?, maxAsyncOperations\?, actions\? \}, got a function$/],
    ['a collection set to an array', { resources: { authors: [] } }, /resources.authors must be false or/],
    ['no actions', { resources: { authors: { actions: [] } } }, /resources.authors.actions must be a non-empty subset of CREATE, UPDATE, CREATE_UPDATE, DELETE without repeats, got \[\]/],
    ['an unknown action', { resources: { authors: { actions: ['CREATE', 'UPSERT'] } } }, /resources.authors.actions must be/],
    ['a repeated action', { resources: { authors: { actions: ['CREATE', 'CREATE'] } } }, /resources.authors.actions must be/],
    ['actions not an array', { resources: { authors: { actions: 'CREATE' } } }, /resources.authors.actions must be/],
    ['a bad maximum of a collection', { resources: { authors: { maxOperations: -1 } } }, /^bulk plugin: resources.authors.maxOperations must be a positive integer, got -1$/],
    // Misspelt, a collection's maximum would be ignored and the plugin's kept.
    ['a misspelt key of a collection', { resources: { authors: { maxOperation: 5 } } }, /^bulk plugin: unknown option resources\.authors\.maxOperation \(did you mean resources\.authors\.maxOperations\?\); resources\.authors takes maxOperations, maxAsyncOperations, actions$/],
    ['an unknown key of a collection', { resources: { authors: { limit: 5 } } }, /^bulk plugin: unknown option resources\.authors\.limit; resources\.authors takes/]
  ]
  for (const [name, opts, message] of refused) {
    t.test(name, async t => {
      const err = await attempt(opts)
      t.type(err, TypeError)
      t.match((err as Error).message, message)
    })
  }

  t.test('registered without the resource plugin', async t => {
    const err = await attempt({}, false)
    t.match((err as Error).message, /^The bulk plugin needs the resource plugin registered before it/)
  })

  t.test('valid options register', async t => {
    t.equal(await attempt({ maxOperations: 5, resources: { authors: { actions: ['DELETE'] } } }), null)
    t.equal(await attempt({ resources: { authors: undefined } }), null, 'undefined is left out')
  })
})

t.test('settings per endpoint', async t => {
  const app = await build(t, store, { maxOperations: 2, resources: { documents: false } })
  const { bulk } = api(app)
  const three = { operations: Array.from({ length: 3 }, (_, i) => ({ action: 'CREATE', entity: { name: `A${i}`, email: 'a@example.com' } })) }
  const res = await bulk('authors', three)
  t.equal(res.statusCode, 400)
  t.match(json(res).detail, 'at most 2 operations, and this one has 3')
  const off = await bulk('documents', { operations: [] })
  t.equal(off.statusCode, 405, 'no bulk endpoint where it is switched off')
  t.notMatch(off.headers.allow, /PATCH/)
})

t.test('the OpenAPI document describes the endpoint from the entity schema', async t => {
  const app = await build(t, store, { resources: { authors: { maxOperations: 50, actions: ['CREATE', 'DELETE'] } } })
  const doc = JSON.parse((await app.inject({ url: '/openapi.json', headers: { 'user-agent': 'bulk-tests/1' } })).body)
  const op = doc.paths['/v1/documents'].patch
  t.strictSame(op.tags, ['documents'])
  t.match(op.description, 'At most 100 operations')
  // The bodies are components (`DocumentBulkRequest`): read through their references.
  const body = resolveRefs(doc, op.requestBody).content['application/json'].schema
  t.strictSame(Object.keys(body.properties).sort(), ['operations', 'transactionMode'])
  t.equal(body.properties.operations.maxItems, 100)
  // One shape per action, told apart by `action`, each with the entity that action reads.
  const shapes: Json[] = body.properties.operations.items.anyOf
  const actionsOf = (shape: Json): string[] => shape.properties.action.enum
  t.strictSame(shapes.flatMap(actionsOf).sort(), ['CREATE', 'CREATE_UPDATE', 'DELETE', 'UPDATE'])
  const shapeOf = (action: string): Json => shapes.find(s => actionsOf(s).includes(action)) as Json
  const update = shapeOf('UPDATE').properties.entity
  t.ok(update.properties.id, 'an UPDATE entity carries its id')
  t.ok(update.properties.name && update.properties.authorId && update.properties.pages, 'and the writable fields')
  t.notOk(update.properties.fingerprint, 'not the read-only ones')
  t.equal(update.additionalProperties, false)
  t.notOk(shapeOf('CREATE').properties.entity.properties.id, 'a CREATE entity has no id: the server assigns it')
  t.strictSame(shapeOf('DELETE').properties.entity.required, ['id'], 'DELETE reads the id alone')
  t.ok(shapeOf('UPDATE').required.includes('ifMatch'), 'documents use ETags: UPDATE needs ifMatch')
  const ok = (op.responses['200'].$ref === undefined ? op.responses['200'] : atPointer(doc, op.responses['200'].$ref)).content['application/json'].schema
  t.strictSame(ok, { $ref: '#/components/schemas/BulkResponse' }, 'the shared bulk response component')
  t.strictSame(doc.components.schemas.BulkResponse.properties.status.enum, ['SUCCEEDED', 'FAILED', 'PARTIAL'])
  for (const s of ['400', '401', '403', '409', '415', '503']) t.ok(responseFor(doc, op, s), `documents ${s}`)
  t.ok(op.responses['409'] && op.responses['503'], 'the conflict and the busy job queue listed: the bulk route\'s own')
  t.notOk(op.responses['412'], 'no 412: a collection has no entity tag to match')
  t.strictSame(op.security, [{ bearerAuth: ['documents:write'] }], 'bearer security with the write scope')
  const authors = resolveRefs(doc, doc.paths['/v1/authors'].patch.requestBody).content['application/json'].schema
  t.equal(authors.properties.operations.maxItems, 50)
  const authorActions = (authors.properties.operations.items.anyOf ?? [authors.properties.operations.items]).flatMap((s: Json) => s.properties.action.enum)
  t.strictSame(authorActions.sort(), ['CREATE', 'DELETE'])
})

t.test('the plugin alone', async t => {
  const notes = defineResource({ name: 'note', collection: 'notes', path: '/notes', idParam: 'noteId', fields: { title: Type.String({ minLength: 1 }) } })
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions, { userAgent: false, idempotencyKey: false })
  await app.register(query, { cursorSecret: CURSOR_SECRET })
  await app.register(resource, { store, resources: [notes] })
  await app.register(bulk)
  await app.ready()
  const send = async (body: Json, headers: Record<string, string> = {}): Promise<Json> => {
    const res = await app.inject({ method: 'PATCH', url: '/notes', headers: { 'content-type': 'application/json', ...headers }, payload: body })
    t.equal(res.statusCode, 200, res.body)
    return json(res)
  }
  const key = { 'svc-idempotency-key': `key-${crypto.randomUUID()}` }
  const created = await send({ transactionMode: 'ATOMIC', operations: [{ action: 'CREATE', entity: { title: 'a' } }, { action: 'CREATE', entity: { title: 'b' } }] }, key)
  t.equal(created.status, 'SUCCEEDED')
  t.equal((await send({ operations: [{ action: 'CREATE', entity: { title: 'c' } }] }, key)).status, 'SUCCEEDED', 'with the conventions plugin\'s key rule off no key is read')
  const id = created.operations[0].entityId
  const note = json(await app.inject({ url: `/notes/${id as string}` }))
  t.match(note, { title: 'a', createdBy: null, modifiedBy: null })
  const { rows } = await store.query<{ ctx: string }>('SELECT ctx FROM notes WHERE id = $1', [id])
  t.strictSame(rows, [{ ctx: 'prod' }], 'stored in the default execution context')
  const deleted = await send({ operations: [{ action: 'DELETE', entity: { id } }, { action: 'UPDATE', entity: { id: created.operations[1].entityId, title: 'B' } }] })
  t.equal(deleted.status, 'SUCCEEDED')
})
