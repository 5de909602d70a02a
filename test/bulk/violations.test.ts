import t from 'tap'
import { MAX_CONTEXT_ITEMS } from '../../plugins/problem/index.js'
import { pglite } from '../support/databases.js'
import { api, build, json } from './helper.js'

// An operation's result lists at most MAX_CONTEXT_ITEMS violations, as a problem does, and an
// entity of a hundred thousand bad values is refused like any other.

t.test('an operation of 150,000 bad values fails with the first ones listed', async t => {
  const store = await pglite.create(t)
  const app = await build(t, store)
  const many = { action: 'CREATE', entity: { name: 'Many tags', kind: 'INVOICE', tags: new Array(150_000).fill(0) } }
  const res = await api(app).bulk('documents', { transactionMode: 'ISOLATED', operations: [many, { action: 'CREATE', entity: { tags: [0] } }] })
  t.equal(res.statusCode, 200, res.body.slice(0, 300))
  type Result = { status: string, detail: string, context: Array<{ field: string }> }
  const [first, second] = (json(res) as { operations: Array<{ result: Result }> }).operations.map(op => op.result)
  t.equal(first?.status, 'FAILED')
  t.match(first?.detail, new RegExp(`^The operation has \\d{6} invalid values; context lists the first ${MAX_CONTEXT_ITEMS}\\.$`))
  t.equal(first?.context.length, MAX_CONTEXT_ITEMS)
  t.ok(first?.context.some(c => c.field === 'operations[0].entity.tags[0]'))
  t.match(second, { status: 'FAILED', detail: /^The operation has \d invalid values; see context for each one\.$/ }, 'a few are all listed')
  t.ok(res.body.length < 30_000, `the answer is short (${res.body.length} bytes)`)
})
