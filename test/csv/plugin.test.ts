import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { parse } from 'csv-parse/sync'
import { readFileSync } from 'node:fs'
import ts from 'typescript'
import { problem, conventions, csv, Collection, type CsvPluginOptions } from '../../index.js'

// The csv plugin at inject level: alone in a bare Fastify server, and behind the conventions plugin.

const UA = 'csv-tests/1 (tap)'
const Item = Type.Object({ id: Type.String(), tags: Type.Array(Type.String()), meta: Type.Union([Type.Object({ source: Type.String() }), Type.Null()]) })
const page = {
  results: [{ id: 'a,1', tags: ['x', 'y'], meta: { source: 'erp' } }, { id: 'b', tags: [], meta: null }],
  paging: { limit: 2, next: { cursor: 'n', url: 'http://h/items?cursor=n' }, previous: { cursor: 'p', url: 'http://h/items?cursor=p' } }
}

async function app (t: Test, withConventions: boolean, opts: CsvPluginOptions = {}): Promise<FastifyInstance> {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  if (withConventions) await app.register(conventions)
  await app.register(csv, opts)
  app.get('/items', { schema: { response: { 200: Collection(Item) } }, config: { csv: true } }, async () => page)
  app.get('/first', { config: { csv: { item: Item } } }, async () => ({ results: [], paging: { next: null, previous: null } }))
  app.get('/broken', { config: { csv: true } as never, schema: { response: { 200: Collection(Item) } } }, async (request, reply) => await reply.code(409 as 200).send({ results: [] } as never))
  app.get('/bare', { config: { csv: { item: Item } } }, async () => ({ results: [page.results[1]] }))
  app.get('/not-a-page', { config: { csv: { item: Item } } }, async () => ({ id: 'x' }))
  app.post('/items/search', { config: { csv: true } }, async () => page)
  return app
}

t.test('alone: CSV when Accept admits text/csv and not JSON, JSON otherwise', async t => {
  const server = await app(t, false)
  const cases: Array<[string | undefined, boolean]> = [
    [undefined, false], ['', false], ['*/*', false], ['text/csv, application/json;q=0.1', false], ['image/png', false],
    ['text/csv', true], ['text/*', true], ['application/json;q=0, text/csv', true]
  ]
  for (const [accept, isCsv] of cases) {
    const res = await server.inject({ url: '/items', headers: accept === undefined ? {} : { accept } })
    t.equal(res.statusCode, 200)
    t.equal(res.headers.vary, 'Accept', `${String(accept)}: Vary`)
    t.equal(res.headers['content-type'], isCsv ? 'text/csv; charset=UTF-8' : 'application/json; charset=utf-8', String(accept))
  }
  const res = await server.inject({ url: '/items', headers: { accept: 'text/csv' } })
  t.equal(res.body, 'id,tags,meta.source\r\n"a,1",x|y,erp\r\nb,,\r\n')
  t.strictSame(parse(res.body, { columns: true }), [{ id: 'a,1', tags: 'x|y', 'meta.source': 'erp' }, { id: 'b', tags: '', 'meta.source': '' }])
  t.equal(res.headers.link, '<http://h/items?cursor=n>; rel="next", <http://h/items?cursor=p>; rel="prev"')
  t.equal(res.headers['content-length'], String(Buffer.byteLength(res.body)))

  const head = await server.inject({ method: 'HEAD', url: '/items', headers: { accept: 'text/csv' } })
  t.equal(head.body, '')
  t.equal(head.headers['content-type'], 'text/csv; charset=UTF-8')
  t.equal(head.headers['content-length'], res.headers['content-length'], 'HEAD measures the CSV body')

  const first = await server.inject({ url: '/first', headers: { accept: 'text/csv' } })
  t.equal(first.body, 'id,tags,meta.source\r\n', 'an empty page: its header row')
  t.equal(first.headers.link, undefined, 'no other page, no Link')
  const bare = await server.inject({ url: '/bare', headers: { accept: 'text/csv' } })
  t.equal(bare.body, 'id,tags,meta.source\r\nb,,\r\n', 'a page without paging')
  t.equal(bare.headers.link, undefined)

  t.equal((await server.inject({ url: '/broken', headers: { accept: 'text/csv' } })).statusCode, 409, 'not a 200: left as it is')
  const notPage = await server.inject({ url: '/not-a-page', headers: { accept: 'text/csv' } })
  t.strictSame(notPage.json(), { id: 'x' }, 'not a collection envelope: JSON')
  const search = await server.inject({ method: 'POST', url: '/items/search', headers: { accept: 'text/csv' } })
  t.equal(search.headers['content-type'], 'application/json; charset=utf-8', 'a POST is not a CSV route')
})

t.test('with the conventions plugin: text/csv is produced, anything else is a 406', async t => {
  const server = await app(t, true)
  const csvPage = await server.inject({ url: '/items', headers: { 'user-agent': UA, accept: 'text/csv' } })
  t.equal(csvPage.headers['content-type'], 'text/csv; charset=UTF-8')
  const json = await server.inject({ url: '/items', headers: { 'user-agent': UA, accept: 'text/csv;q=1, application/json;q=0.1' } })
  t.equal(json.headers['content-type'], 'application/json; charset=utf-8')
  const refused = await server.inject({ url: '/items', headers: { 'user-agent': UA, accept: 'image/png' } })
  t.equal(refused.statusCode, 406)
  t.equal(refused.json().detail, 'None of the media types in the Accept header "image/png" can be produced by GET /items; accept application/json, text/csv.')
  const search = await server.inject({ method: 'POST', url: '/items/search', headers: { 'user-agent': UA, accept: 'text/csv' } })
  t.equal(search.statusCode, 406, 'the POST produces JSON alone')
})

t.test('registered before the conventions plugin: both boot, and Accept still picks among JSON and CSV', async t => {
  // Each declares request.negotiatedType; the second one registered must not declare it again.
  const server = Fastify()
  t.teardown(() => server.close())
  await server.register(problem)
  await server.register(csv)
  await server.register(conventions)
  server.get('/items', { schema: { response: { 200: Collection(Item) } }, config: { csv: true } }, async () => page)
  const csvPage = await server.inject({ url: '/items', headers: { 'user-agent': UA, accept: 'text/csv' } })
  t.equal(csvPage.headers['content-type'], 'text/csv; charset=UTF-8')
  const refused = await server.inject({ url: '/items', headers: { 'user-agent': UA, accept: 'image/png' } })
  t.equal(refused.statusCode, 406, 'the conventions plugin negotiates')
})

t.test('a route\'s own produces and Vary are kept', async t => {
  const server = Fastify()
  t.teardown(() => server.close())
  await server.register(problem)
  await server.register(conventions, { accept: false })
  await server.register(csv, { arraySeparator: ';' })
  server.get('/own', { config: { csv: { item: Item }, conventions: { produces: ['application/json', 'application/vnd.svc-items+json'] } } }, async (request, reply) => {
    reply.header('vary', 'Origin')
    return page
  })
  server.get('/listed', { config: { csv: { item: Item }, conventions: { produces: ['text/csv; charset=utf-8', 'application/json'] } } }, async (request, reply) => {
    reply.header('vary', 'Origin, accept')
    return page
  })
  server.get('/off', { config: { csv: { item: Item }, conventions: false } }, async () => page)
  server.get('/json-only', { config: { csv: false } }, async () => page)
  // The route's own preSerialization hooks run first, one or many.
  type Page = { results: Array<{ tags: string[] }> }
  const addTag = async (request: unknown, reply: unknown, payload: Page): Promise<Page> => ({ ...payload, results: payload.results.map((r) => ({ ...r, tags: [...r.tags, 'z'] })) })
  server.get('/hooked', { config: { csv: { item: Item } }, preSerialization: addTag as never }, async () => page)
  server.get('/hooked-twice', { config: { csv: { item: Item } }, preSerialization: [addTag, addTag] as never }, async () => page)
  const own = await server.inject({ url: '/own', headers: { 'user-agent': UA, accept: 'text/csv' } })
  t.equal(own.headers.vary, 'Origin, Accept')
  t.match(own.body, 'x;y', 'the separator option')
  const listed = await server.inject({ url: '/listed', headers: { 'user-agent': UA, accept: 'text/csv' } })
  t.equal(listed.headers.vary, 'Origin, accept', 'Accept named once')
  t.equal(listed.headers['content-type'], 'text/csv; charset=UTF-8')
  t.equal((await server.inject({ url: '/off', headers: { accept: 'text/csv' } })).headers['content-type'], 'text/csv; charset=UTF-8', 'negotiated by the csv plugin itself')
  const jsonOnly = await server.inject({ url: '/json-only', headers: { 'user-agent': UA, accept: 'text/csv' } })
  t.equal(jsonOnly.headers['content-type'], 'application/json; charset=utf-8', 'config.csv = false: JSON')
  t.equal(jsonOnly.headers.vary, undefined)
  t.match((await server.inject({ url: '/hooked', headers: { 'user-agent': UA, accept: 'text/csv' } })).body, 'x;y;z')
  t.match((await server.inject({ url: '/hooked-twice', headers: { 'user-agent': UA, accept: 'text/csv' } })).body, 'x;y;z;z')
})

t.test('the published types declare request.negotiatedType, which the plugin declares at run time', async t => {
  // Used alone, nothing else brings the conventions plugin's declaration to an adopter's program.
  const source = readFileSync(new URL('../../plugins/csv/index.ts', import.meta.url), 'utf8')
  const { outputText } = ts.transpileDeclaration(source, { fileName: 'index.ts', compilerOptions: { module: ts.ModuleKind.NodeNext } })
  t.match(outputText, /interface FastifyRequest \{[^}]*negotiatedType: string \| null;/)
})

t.test('bad options and route configs stop the boot, naming them', async t => {
  const options: Array<[unknown, RegExp]> = [
    [{ arraySeparator: ',' }, /csv plugin: arraySeparator must be one character other than a comma, a quote, CR or LF, got ","/],
    [{ arraySeparator: '||' }, /arraySeparator must be one character/],
    [{ arraySeparator: 1 }, /arraySeparator must be one character.*got 1/],
    [{ separator: '|' }, /separator/]
  ]
  for (const [opts, message] of options) {
    const server = Fastify()
    await t.rejects(async () => { await server.register(csv, opts as CsvPluginOptions) }, { message }, JSON.stringify(opts))
  }
  const routes: Array<[Record<string, unknown>, RegExp]> = [
    [{ config: { csv: 'yes' } }, /csv plugin: config\.csv of GET \/x must be true, false or \{ item: <object schema> \}, got "yes"/],
    [{ config: { csv: true } }, /config\.csv of GET \/x: the route has no collection response schema \(200 with results\.items\); give config\.csv = \{ item: <object schema> \}/],
    [{ config: { csv: {} } }, /the route has no collection response schema/],
    [{ config: { csv: { item: Type.String() } } }, /config\.csv of GET \/x: the item schema must be an object schema with properties/],
    // A route's own separator is no setting: it would be ignored and the plugin's used.
    [{ config: { csv: { item: Item, arraySeparator: ';' } } }, /^csv plugin: config\.csv of GET \/x: unknown option config\.csv\.arraySeparator; config\.csv takes item$/],
    [{ config: { csv: { iten: Item } } }, /unknown option config\.csv\.iten \(did you mean config\.csv\.item\?\)/]
  ]
  for (const [opts, message] of routes) {
    const server = Fastify()
    await server.register(csv)
    t.throws(() => server.get('/x', opts as never, async () => page), { name: 'TypeError', message }, JSON.stringify(opts.config))
    await server.close()
  }
})
