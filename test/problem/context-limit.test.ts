import t from 'tap'
import Fastify from 'fastify'
import problem, { invalidData, MAX_CONTEXT_ITEMS } from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'

// A problem lists at most MAX_CONTEXT_ITEMS violations, and its detail says how many there were:
// a body of many bad values must not get an answer many times its own size.

const items = (n: number): Array<{ message: string, field: string }> => Array.from({ length: n }, (_, i) => ({ message: 'must be a string', field: `tags[${i}]` }))

t.test('invalidData lists the first violations and counts them all', async t => {
  const table: Array<[number, string | undefined, string, number]> = [
    [1, undefined, 'The request has 1 invalid value; see context for each one.', 1],
    [MAX_CONTEXT_ITEMS, undefined, `The request has ${MAX_CONTEXT_ITEMS} invalid values; see context for each one.`, MAX_CONTEXT_ITEMS],
    [MAX_CONTEXT_ITEMS + 1, undefined, `The request has ${MAX_CONTEXT_ITEMS + 1} invalid values; context lists the first ${MAX_CONTEXT_ITEMS}.`, MAX_CONTEXT_ITEMS],
    [150_000, undefined, `The request has 150000 invalid values; context lists the first ${MAX_CONTEXT_ITEMS}.`, MAX_CONTEXT_ITEMS],
    [3, 'The author would be invalid after this patch; see context for each value.', 'The author would be invalid after this patch; see context for each value.', 3],
    [250, 'The author would be invalid after this patch.', `The author would be invalid after this patch. Context lists the first ${MAX_CONTEXT_ITEMS} of the 250.`, MAX_CONTEXT_ITEMS]
  ]
  for (const [n, detail, said, listed] of table) {
    const p = invalidData(items(n), detail)
    t.equal(p.detail, said, `${n} violations, detail ${detail === undefined ? 'made' : 'given'}`)
    t.equal(p.context?.length, listed)
    t.equal(p.context?.[0]?.field, 'tags[0]', 'the first ones, in order')
  }
})

t.test('a body of 150,000 bad values gets a short answer', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  app.post('/tags', { schema: { body: { type: 'object', properties: { tags: { type: 'array', maxItems: 20, items: { type: 'string' } } } } } }, async () => ({}))
  const payload = JSON.stringify({ tags: new Array(150_000).fill(0) })
  const res = await app.inject({ method: 'POST', url: '/tags', headers: { 'content-type': 'application/json' }, payload })
  t.equal(res.statusCode, 400)
  const body = JSON.parse(res.body) as { detail: string, context: Array<{ field: string, code: string }> }
  t.equal(body.detail, `The request has 150001 invalid values; context lists the first ${MAX_CONTEXT_ITEMS}.`)
  t.equal(body.context.length, MAX_CONTEXT_ITEMS)
  t.strictSame(body.context[0], { code: 'INPUT_MAX_VALUE', message: 'must have at most 20 items', field: 'tags', source: 'body' })
  t.ok(res.body.length < payload.length / 10, `the answer (${res.body.length} bytes) is far smaller than the body`)
  await app.close()
})
