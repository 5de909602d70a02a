import t from 'tap'
import { serviceClient, startService } from './service.js'

// Issue 42: the context items of the reference service's problems, as a client reads them
// (conventions, Validation context codes: each item has code, message, field, source and,
// when applicable, value; an item about a path parameter has no source, as the convention's
// context item names body, query and header only).

t.test('context items name the part, the field and the value as sent', async t => {
  const { base } = await startService(t)
  const { call } = serviceClient(base)
  const author = await call('POST', '/v1/authors', { name: 'Ann', email: 'ann@example.com' })
  const document = { name: 'issue-42', authorId: author.body.id, kind: 'INVOICE' }
  const draft = await call('POST', '/v1/documents', { ...document, name: 'issue-42-draft' })
  // [what, method, path, body, the one context item]
  const table: Array<[string, string, string, unknown, Record<string, unknown>]> = [
    ['a path parameter against its pattern', 'GET', '/v1/documents/bad%20id', undefined,
      { code: 'INPUT_INVALID', field: 'documentId', value: 'bad id', message: 'must match the pattern ^[A-Za-z0-9._~-]+$' }],
    ['a path parameter that is not ASCII, without a source (the convention names body, query and header)', 'GET', '/v1/authors/caf%C3%A9', undefined,
      { code: 'INPUT_INVALID', field: 'authorId', value: 'café', message: 'must match the pattern ^[A-Za-z0-9._~-]+$' }],
    ['a path parameter too long', 'GET', `/v1/authors/${'x'.repeat(129)}`, undefined,
      { code: 'INPUT_MAX_VALUE', field: 'authorId', value: 'x'.repeat(100) + '…', message: 'must have at most 128 characters' }],
    // A value longer than 100 characters is quoted cut short, as the plugins quote what a client sent.
    ['a filter value too long', 'GET', `/v1/documents?name=${'x'.repeat(2001)}`, undefined,
      { code: 'INPUT_MAX_VALUE', field: 'name', source: 'query', value: 'x'.repeat(100) + '…', message: 'must have at most 2000 characters' }],
    ['a repeated filter value too long', 'GET', `/v1/documents?name=a&name=${'x'.repeat(2001)}`, undefined,
      { code: 'INPUT_MAX_VALUE', field: 'name', source: 'query', value: 'x'.repeat(100) + '…', message: 'must have at most 2000 characters' }],
    ['a 64-bit integer filter with a leading zero', 'GET', '/v1/documents?byteCount=09223372036854775807', undefined,
      { code: 'INPUT_INVALID', field: 'byteCount', source: 'query', value: '09223372036854775807', message: 'must be a 64-bit integer written as a string, like "9007199254740993" or an empty string' }],
    ['a number for a decimal filter in a search', 'POST', '/v1/documents/search', { amount: 10.2 },
      { code: 'INPUT_INVALID', field: 'amount', source: 'body', value: '10.2', message: 'must be a decimal number written as a string, like "-12.50", an empty string, null or an array, not number' }],
    ['a string for a boolean filter in a search', 'POST', '/v1/authors/search', { active: 'true' },
      { code: 'INPUT_INVALID', field: 'active', source: 'body', value: 'true', message: 'must be a boolean (true or false), an empty string, null or an array' }],
    ['a body that is an array', 'POST', '/v1/documents', [1, 2],
      { code: 'INPUT_INVALID', field: '$', source: 'body', message: 'must be object, not array' }],
    ['a body that is null', 'POST', '/v1/documents', 'null',
      { code: 'INPUT_NULL', field: '$', source: 'body', message: 'must not be null' }],
    ['an action body that is a list', 'POST', `/v1/documents/${draft.body.id as string}/publish`, '[]',
      { code: 'INPUT_INVALID', field: '$', source: 'body', message: 'must be object, not array' }],
    ['a number for a decimal string', 'POST', '/v1/documents', { ...document, amount: 3.5 },
      { code: 'INPUT_INVALID', field: 'amount', source: 'body', value: '3.5', message: 'must be string or null, not number' }],
    ['a string for an integer', 'POST', '/v1/documents', { ...document, pageCount: '3' },
      { code: 'INPUT_INVALID', field: 'pageCount', source: 'body', value: '3', message: 'must be integer, not string' }]
  ]
  for (const [what, method, path, body, item] of table) {
    const res = await call(method, path, body)
    t.equal(res.status, 400, what)
    t.strictSame(res.body.context, [item], what)
  }
})

t.test('a write lists every violation at once: a bad body and a query parameter it does not take', async t => {
  const { base } = await startService(t)
  const { call } = serviceClient(base)
  const author = await call('POST', '/v1/authors', { name: 'Bea', email: 'bea@example.com' })
  const cases: Array<[string, string, string, unknown, Array<[string, string]>]> = [
    ['a create', 'POST', '/v1/authors?name=x', { name: 5 }, [['email', 'body'], ['name', 'body'], ['name', 'query']]],
    ['a create, the body fine', 'POST', '/v1/authors?name=x', { name: 'Cy', email: 'cy@example.com' }, [['name', 'query']]],
    ['a merge patch', 'PATCH', `/v1/authors/${author.body.id as string}?dryRun=true`, { name: 5 }, [['name', 'body'], ['dryRun', 'query']]]
  ]
  for (const [what, method, path, body, items] of cases) {
    const res = await call(method, path, body)
    t.equal(res.status, 400, what)
    t.strictSame(res.body.context.map((c: { field: string, source: string }) => [c.field, c.source]), items, what)
  }
})
