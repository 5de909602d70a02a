import t from 'tap'
import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import {
  CronSchedule, DateOnly, DateTime, Decimal, Duration, Id, Int32, Int64, Interval, Nullable, Percentage, Quantity, Ref, UpperSnakeEnum
} from '../../schemas/types.js'
import { Collection } from '../../schemas/collection.js'
import { BulkRequest } from '../../schemas/bulk.js'

const Body = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  kind: UpperSnakeEnum(['PURCHASE_ORDER', 'INVOICE', 'CONTRACT']),
  pageCount: Int32({ minimum: 0, maximum: 100000 }),
  byteCount: Nullable(Int64({ minimum: '0' })),
  amount: Nullable(Decimal({ maxIntegerDigits: 15, maxFractionDigits: 4 })),
  discountPercentage: Nullable(Percentage()),
  retentionDuration: Nullable(Duration()),
  validityInterval: Nullable(Interval()),
  reviewSchedule: Nullable(CronSchedule()),
  effectiveDate: Nullable(DateOnly()),
  publishedDateTime: Nullable(DateTime()),
  authorRef: Ref('author'),
  weight: Quantity({ uomValues: ['kg', 'g'] })
}, { additionalProperties: false })

const valid = {
  name: 'Order 1',
  kind: 'INVOICE',
  pageCount: 3,
  byteCount: '9223372036854775807',
  amount: '-123456789012345.1234',
  discountPercentage: '12.5',
  retentionDuration: 'P1Y2M3W4DT5H6M7.5S',
  validityInterval: 'R5/2024-05-01T00:00:00Z/P1D',
  reviewSchedule: '0 0 * JAN-MAR MON-FRI',
  effectiveDate: '2024-02-29',
  publishedDateTime: '2024-05-01T12:00:00.000Z',
  authorRef: 'svc:author::123e4567-e89b-42d3-a456-426614174000',
  weight: { amount: '1.5', uom: 'kg' }
}

interface Item { code: string, field: string, message: string, source: string, value?: string }

async function build (t: { teardown: (fn: () => unknown) => void }) {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  t.teardown(() => app.close())
  return app
}

t.test('a body breaking several builders gets one context item per violation, with the convention codes', async t => {
  const app = await build(t)
  app.post('/documents', { schema: { body: Body } }, async (request) => request.body)
  const ok = await app.inject({ method: 'POST', url: '/documents', payload: valid })
  t.equal(ok.statusCode, 200)
  const nulls = { ...valid, byteCount: null, amount: null, discountPercentage: null, retentionDuration: null, validityInterval: null, reviewSchedule: null, effectiveDate: null, publishedDateTime: null }
  t.equal((await app.inject({ method: 'POST', url: '/documents', payload: nulls })).statusCode, 200, 'every Nullable takes null')

  const res = await app.inject({
    method: 'POST',
    url: '/documents',
    payload: {
      name: '',
      kind: 'RECEIPT',
      pageCount: 100001,
      byteCount: '-1',
      amount: '1.23456',
      discountPercentage: '100.5',
      retentionDuration: 'P1YT',
      validityInterval: '2024-05-02/2024-05-01',
      reviewSchedule: '60 * * * *',
      effectiveDate: '2023-02-29',
      publishedDateTime: '2024-05-01T25:00:00Z',
      authorRef: 'svc:document::123',
      weight: { amount: 5, uom: 'kg' }
    }
  })
  t.equal(res.statusCode, 400)
  t.match(res.headers['content-type'], /^application\/problem\+json/)
  const body = JSON.parse(res.body) as { title: string, context: Item[] }
  t.equal(body.title, 'Invalid Data')
  const byField = Object.fromEntries(body.context.map(c => [c.field, c]))
  t.equal(body.context.length, 13, 'thirteen violations, thirteen items')
  t.equal(Object.keys(byField).length, 13, 'one item per field')
  const expected: Array<[string, string, RegExp]> = [
    ['name', 'INPUT_BLANK', /must not be blank/],
    ['kind', 'INPUT_INVALID', /must be one of PURCHASE_ORDER, INVOICE, CONTRACT/],
    ['pageCount', 'INPUT_MAX_VALUE', /at most 100000/],
    ['byteCount', 'INPUT_MIN_VALUE', /at least 0/],
    ['amount', 'INPUT_INVALID', /at most 15 digits before the decimal point and 4 digits after/],
    ['discountPercentage', 'INPUT_MAX_VALUE', /at most 100/],
    ['retentionDuration', 'INPUT_INVALID', /must be an ISO 8601 duration like/],
    ['validityInterval', 'INPUT_INVALID', /must be an ISO 8601 interval like/],
    ['reviewSchedule', 'INPUT_INVALID', /must be a five-field cron schedule like/],
    ['effectiveDate', 'INPUT_INVALID', /must be a calendar date like 2024-05-01/],
    ['publishedDateTime', 'INPUT_INVALID', /must be a UTC date-time like/],
    ['authorRef', 'INPUT_INVALID', /pattern \^svc:author::/],
    ['weight.amount', 'INPUT_INVALID', /must be string/]
  ]
  for (const [field, code, message] of expected) {
    t.equal(byField[field]?.code, code, `${field} code`)
    t.match(byField[field]?.message, message, `${field} message`)
    t.equal(byField[field]?.source, 'body')
  }
  t.equal(byField.byteCount?.value, '-1', 'the offending value is quoted')
})

t.test('a wrong type on a Nullable is one item; type + enum and length + format pairs give one item per field', async t => {
  const app = await build(t)
  app.post('/documents', { schema: { body: Body } }, async () => ({}))
  const res = await app.inject({ method: 'POST', url: '/documents', payload: { ...valid, publishedDateTime: 12, effectiveDate: true } })
  const items = (JSON.parse(res.body) as { context: Item[] }).context
  t.strictSame(items.map(i => [i.field, i.code]).sort(), [['effectiveDate', 'INPUT_INVALID'], ['publishedDateTime', 'INPUT_INVALID']])
  t.match(items.find(i => i.field === 'publishedDateTime')?.message, /must be string or null/)

  // Ajv reports `enum` whatever the type, and `maxLength` beside `format`: the problem plugin
  // keeps the most telling error of each field.
  const nullEnum = await app.inject({ method: 'POST', url: '/documents', payload: { ...valid, kind: null } })
  const nullItems = (JSON.parse(nullEnum.body) as { context: Item[] }).context
  t.ok(nullItems.some(i => i.field === 'kind' && i.code === 'INPUT_NULL'), 'null on a required enum is INPUT_NULL')
  t.equal(nullItems.length, 1, 'one item for null on an enum')
  const offset = await app.inject({ method: 'POST', url: '/documents', payload: { ...valid, publishedDateTime: '2024-05-01T12:00:00.000+01:00' } })
  const offsetItems = (JSON.parse(offset.body) as { context: Item[] }).context
  t.ok(offsetItems.some(i => i.field === 'publishedDateTime' && i.code === 'INPUT_INVALID' && /UTC date-time/.test(i.message)), 'the format item is there')
  t.equal(offsetItems.length, 1, 'one item for an offset date-time')
})

t.test('responses: Nullable fields serialize null as null, never dropped or ""', async t => {
  const app = await build(t)
  const Doc = Type.Object({
    id: Id(),
    description: Nullable(Type.String({ maxLength: 2000 })),
    byteCount: Nullable(Int64()),
    publishedDateTime: Nullable(DateTime()),
    status: Nullable(UpperSnakeEnum(['DRAFT', 'PUBLISHED'])),
    pageCount: Nullable(Int32({ minimum: 0, maximum: 10 })),
    active: Nullable(Type.Boolean()),
    tags: Nullable(Type.Array(Type.String())),
    metadata: Nullable(Type.Object({ source: Nullable(Type.Object({ system: Type.String(), region: Nullable(Type.String()) })) })),
    mixed: Nullable(Type.Union([Type.String(), Type.Integer()]))
  })
  const filled = {
    id: 'd1',
    description: 'text',
    byteCount: '42',
    publishedDateTime: '2024-05-01T12:00:00.000Z',
    status: 'DRAFT',
    pageCount: 0,
    active: false,
    tags: ['a'],
    metadata: { source: { system: 'erp', region: null } },
    mixed: 7
  }
  const empty = { id: 'd2', description: null, byteCount: null, publishedDateTime: null, status: null, pageCount: null, active: null, tags: null, metadata: null, mixed: null }
  app.get('/docs/:id', { schema: { response: { 200: Doc } } }, async (request) => (request.params as { id: string }).id === 'd1' ? filled : empty)
  const nulls = await app.inject({ method: 'GET', url: '/docs/d2' })
  t.equal(nulls.statusCode, 200)
  t.equal(nulls.body, JSON.stringify(empty), 'every null is written, in order')
  const values = await app.inject({ method: 'GET', url: '/docs/d1' })
  t.strictSame(JSON.parse(values.body), filled, 'values are kept as they are')
  t.equal(JSON.parse(values.body).metadata.source.region, null, 'a nested null too')
})

t.test('responses: a collection offering both pagings serializes each shape whole', async t => {
  const app = await build(t)
  const Page = Collection(Type.Object({ id: Id(), note: Nullable(Type.String()) }))
  app.get('/cursor', { schema: { response: { 200: Page } } }, async () => ({ results: [{ id: 'a', note: null }], paging: { limit: 1, next: { cursor: 'YQ', url: '/cursor?cursor=YQ' }, previous: null } }))
  app.get('/offset', { schema: { response: { 200: Page } } }, async () => ({ results: [], paging: { limit: 1, offset: 5, totalCount: 5, next: null, previous: { url: '/offset?offset=4' } } }))
  t.strictSame(JSON.parse((await app.inject('/cursor')).body), { results: [{ id: 'a', note: null }], paging: { limit: 1, next: { cursor: 'YQ', url: '/cursor?cursor=YQ' }, previous: null } })
  t.strictSame(JSON.parse((await app.inject('/offset')).body), { results: [], paging: { limit: 1, offset: 5, totalCount: 5, next: null, previous: { url: '/offset?offset=4' } } }, 'offset and totalCount kept')
})

t.test('bulk: too many operations is one INPUT_MAX_VALUE item; entity errors name their operation', async t => {
  const app = await build(t)
  const Entity = Type.Object({ name: Type.String({ minLength: 1 }) }, { additionalProperties: false })
  app.patch('/authors', { schema: { body: BulkRequest(Entity, { maxOperations: 2 }) } }, async (request) => request.body)
  const op = { action: 'CREATE', entity: { name: 'a' } }
  const ok = await app.inject({ method: 'PATCH', url: '/authors', payload: { operations: [op] } })
  t.strictSame(JSON.parse(ok.body), { operations: [op], transactionMode: 'ISOLATED' }, 'transactionMode defaults to ISOLATED')
  const many = await app.inject({ method: 'PATCH', url: '/authors', payload: { operations: [op, op, op] } })
  t.equal(many.statusCode, 400)
  t.match(JSON.parse(many.body).context, [{ code: 'INPUT_MAX_VALUE', field: 'operations', message: /at most 2 items/ }])
  const bad = await app.inject({ method: 'PATCH', url: '/authors', payload: { operations: [op, { action: 'MERGE', entity: { name: '' } }] } })
  const fields = (JSON.parse(bad.body) as { context: Item[] }).context.map(i => `${i.field} ${i.code}`).sort()
  t.strictSame(fields, ['operations[1].action INPUT_INVALID', 'operations[1].entity.name INPUT_BLANK'])
})
