import t from 'tap'
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import resource, { defineResource } from '../../plugins/resource/index.js'
import { DateTime, Nullable, UpperSnakeEnum } from '../../schemas/types.js'
import { databases } from '../support/databases.js'
import { prerequisites } from './helper.js'

// Actions of a resource that is not soft-deletable, on its own field and with values set
// besides the state: a literal and the time of the change. No restore without soft delete.

const tickets = defineResource({
  name: 'ticket',
  collection: 'tickets',
  path: '/v1/tickets',
  idParam: 'ticketId',
  fields: {
    title: Type.String({ minLength: 1, maxLength: 50 }),
    stage: UpperSnakeEnum(['OPEN', 'CLOSED'], { default: 'OPEN' }),
    resolution: Nullable(Type.String({ maxLength: 20 })),
    closedDateTime: Nullable(DateTime()),
    // No maxItems: as many as the entity's own limits allow.
    steps: Type.Array(Type.Object({ at: Type.Integer({ minimum: 1, maximum: 1000 }), what: Type.String({ maxLength: 50 }) }), { default: [] })
  },
  subCollections: { steps: { key: 'at' } },
  actions: {
    close: { field: 'stage', from: ['OPEN'], to: 'CLOSED', set: { resolution: 'DONE', closedDateTime: 'now' }, summary: 'Closes the ticket' },
    reopen: { field: 'stage', from: ['CLOSED'], to: 'OPEN', set: { resolution: null, closedDateTime: null } }
  }
})

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const app = await prerequisites(Fastify())
    await app.register(resource, { store, resources: [tickets] })
    t.teardown(() => app.close())
    await app.ready()

    const created = (await app.inject({ method: 'POST', url: '/v1/tickets', payload: { title: 'printer' } })).json()
    const url = `/v1/tickets/${created.id as string}`
    const closed = await app.inject({ method: 'POST', url: `${url}/close` })
    t.equal(closed.statusCode, 200)
    t.match(closed.json(), { stage: 'CLOSED', resolution: 'DONE', closedDateTime: String })
    t.equal(closed.headers.etag, closed.json().etag, 'the new ETag')
    t.not(closed.json().etag, created.etag)

    const again = await app.inject({ method: 'POST', url: `${url}/close` })
    t.equal(again.statusCode, 409)
    t.match(again.json().context, [{ code: 'INVALID_STATE_TRANSITION', value: 'CLOSED', message: 'close applies from OPEN only' }], 'the current state and the allowed ones')
    t.match(again.json().detail, /is CLOSED, and close applies to one that is OPEN/)

    const stale = await app.inject({ method: 'POST', url: `${url}/reopen`, headers: { 'if-match': created.etag } })
    t.equal(stale.statusCode, 412, 'If-Match honoured when sent')
    const reopened = await app.inject({ method: 'POST', url: `${url}/reopen`, headers: { 'if-match': closed.json().etag } })
    t.equal(reopened.statusCode, 200)
    t.match(reopened.json(), { stage: 'OPEN', resolution: null, closedDateTime: null })

    t.equal((await app.inject({ method: 'POST', url: `${url}/restore` })).statusCode, 404, 'no restore: nothing is soft-deleted')
    t.equal((await app.inject({ method: 'POST', url: '/v1/tickets/missing/close' })).statusCode, 404)
    t.equal((await app.inject({ method: 'POST', url: `${url}/close`, payload: { why: 1 } })).statusCode, 400, 'a body other than {} is refused')
    const nullBody = await app.inject({ method: 'POST', url: `${url}/close`, headers: { 'content-type': 'application/json' }, payload: 'null' })
    t.equal(nullBody.statusCode, 400, 'null is a body, and not {}')
    t.match(nullBody.json().context, [{ code: 'INPUT_NULL', field: '$', source: 'body' }])
    t.equal((await app.inject({ method: 'POST', url: `${url}/close`, payload: {} })).statusCode, 200, 'the empty object is no body')
    const put = await app.inject({ method: 'PUT', url: `${url}/steps`, payload: { results: [{ at: 2, what: 'restart' }, { at: 1, what: 'look' }] } })
    t.equal(put.statusCode, 204, 'a sub-collection without maxItems, replaced whole')
    t.strictSame((await app.inject({ url: `${url}/steps` })).json().results, [{ at: 1, what: 'look' }, { at: 2, what: 'restart' }], 'ordered by its key')
    t.equal((await app.inject({ method: 'DELETE', url })).statusCode, 204)
    t.equal((await app.inject({ url })).statusCode, 404, 'a hard delete')
  })
}
