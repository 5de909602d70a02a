import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import problem from '../../plugins/problem/index.js'
import query, { type QueryPluginOptions } from '../../plugins/query/index.js'
import { createFieldMap } from '../../model/fields.js'
import { fields, SECRET } from './helper.js'

async function register (opts: Partial<QueryPluginOptions>): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(query, opts as QueryPluginOptions)
  await app.ready()
  return app
}

t.test('plugin options are checked at registration, naming the option and its value', async (t) => {
  const table: Array<[Partial<QueryPluginOptions>, RegExp]> = [
    [{}, /^query plugin: cursorSecret: cursor: secret must be a string or bytes of at least 16 bytes, got undefined$/],
    [{ cursorSecret: 'short' }, /^query plugin: cursorSecret: .*got 5 bytes$/],
    [{ cursorSecret: SECRET, maxLimit: 0 }, /^query plugin: maxLimit must be an integer from 1 to 2147483647, got 0$/],
    [{ cursorSecret: SECRET, maxLimit: 2147483648 }, /maxLimit must be an integer/],
    [{ cursorSecret: SECRET, defaultLimit: 1.5 }, /^query plugin: defaultLimit must be an integer from 1 to 2147483647, got 1.5$/],
    [{ cursorSecret: SECRET, defaultLimit: '20' as unknown as number }, /defaultLimit must be an integer/],
    [{ cursorSecret: SECRET, defaultLimit: 50, maxLimit: 10 }, /^query plugin: defaultLimit \(50\) must not exceed maxLimit \(10\)$/],
    [{ cursorSecret: SECRET, fiql: { maxDepth: 0 } }, /^query plugin: fiql: FIQL limits: maxDepth must be a positive integer up to 100, got 0$/],
    // Misspelt, a limit would be ignored and the default kept.
    [{ cursorSecret: SECRET, maxLimt: 5 } as never, /^query plugin: unknown option maxLimt \(did you mean maxLimit\?\); the options are cursorSecret, defaultLimit, maxLimit, fiql$/],
    [{ cursorSecret: SECRET, fiql: { maxLen: 10 } } as never, /^query plugin: unknown option fiql\.maxLen; fiql takes maxLength, maxDepth, maxListSize, maxComparisons$/]
  ]
  for (const [opts, message] of table) {
    await t.rejects(register(opts), message, JSON.stringify(opts))
  }
  const bytes = await register({ cursorSecret: new Uint8Array(32) })
  await bytes.close()
  const small = await register({ cursorSecret: SECRET, maxLimit: 5 })
  await small.close()
})

t.test('config.collection is checked when the route is added', async (t) => {
  const app = Fastify()
  await app.register(problem)
  await app.register(query, { cursorSecret: SECRET })
  const noId = createFieldMap([{ path: 'name', type: 'string' }])
  const clash = createFieldMap([{ path: 'id', type: 'string' }, { path: 'limit', type: 'int32' }])
  const table: Array<[unknown, RegExp]> = [
    [true, /config\.collection must be an object or false, got true/],
    [{}, /config\.collection\.fields must be a field map .*got undefined/],
    [{ fields: new Map() }, /config\.collection\.fields must be a field map/],
    [{ fields, maxLimit: 0 }, /config\.collection\.maxLimit must be an integer from 1 to 2147483647, got 0/],
    [{ fields, defaultLimit: -1 }, /config\.collection\.defaultLimit must be an integer/],
    [{ fields, defaultLimit: 30, maxLimit: 10 }, /config\.collection\.defaultLimit \(30\) must not exceed maxLimit \(10\)/],
    [{ fields, offset: 'yes' }, /config\.collection\.offset must be a boolean, got "yes"/],
    [{ fields, etag: 1 }, /config\.collection\.etag must be a boolean, got 1/],
    [{ fields, scope: 'docs' }, /config\.collection\.scope must be a function of the request, got "docs"/],
    [{ fields: noId }, /config\.collection: ordering: idField "id" is not in the field map/],
    [{ fields, idField: 'nope' }, /idField "nope"/],
    [{ fields, defaultOrdering: [{ field: 'tags', direction: 'asc' }] }, /defaultOrdering has/],
    [{ fields: clash }, /the attribute limit has the name of a paging or filter parameter/],
    // Misspelt, a route's limit would be ignored and the plugin's kept.
    [{ fields, defaultLimt: 3 }, /^query plugin: config\.collection of GET \/x: unknown option config\.collection\.defaultLimt \(did you mean config\.collection\.defaultLimit\?\); config\.collection takes fields, defaultLimit, maxLimit, offset, scope, defaultOrdering, idField, etag$/],
    [{ fields, pageSize: 3 }, /unknown option config\.collection\.pageSize; config\.collection takes/]
  ]
  for (const [config, message] of table) {
    t.throws(() => app.get('/x', { config: { collection: config as false } }, async () => ({})), { name: 'TypeError', message }, JSON.stringify(config))
  }
  t.throws(() => app.get('/y', { config: { collection: 'yes' as unknown as false } }, async () => ({})),
    new TypeError('query plugin: config.collection of GET /y: config.collection must be an object or false, got "yes"'), 'the message names the route')
  await app.close()
})

t.test('route hooks and schemas of the route are kept; HEAD routes parse too', async (t) => {
  const app = Fastify()
  await app.register(problem)
  await app.register(query, { cursorSecret: SECRET })
  const seen: string[] = []
  app.get('/x', {
    config: { collection: { fields } },
    preValidation: async () => { seen.push('preValidation') },
    onSend: async (_request, _reply, payload) => { seen.push('onSend'); return payload },
    schema: { querystring: { type: 'object', properties: { limit: { type: 'integer' } } } }
  }, async (request, reply) => reply.sendCollection({ items: [{ id: 'a' }], hasNext: false, hasPrevious: false, next: null, previous: null, ...(request.collectionQuery?.paging.kind === 'offset' ? { totalCount: 1 } : {}) }))
  app.get('/y', {
    config: { collection: { fields } },
    preValidation: [async () => { seen.push('array') }]
  }, async (_request, reply) => reply.sendCollection({ items: [], hasNext: false, hasPrevious: false, next: null, previous: null }))
  const res = await app.inject('/x?limit=1')
  t.equal(res.statusCode, 200)
  t.strictSame(seen, ['preValidation', 'onSend'])
  t.equal((await app.inject('/y')).statusCode, 200)
  t.strictSame(seen.slice(2), ['array'])
  const head = await app.inject({ method: 'HEAD', url: '/x?limit=0' })
  t.equal(head.statusCode, 400, 'HEAD checks the query like GET')
  t.equal((await app.inject('/x?offset=0&totalCount=true')).json().paging.totalCount, 1)
  const bad = await app.inject('/x?limit=x')
  t.equal(bad.statusCode, 400)
  t.equal(bad.json().context[0].message, 'must be an integer; above 100, 100 applies.', 'the hook speaks before the route\'s own querystring schema')
  await app.close()
})
