import t from 'tap'
import Fastify from 'fastify'
import problem from '../../plugins/problem/index.js'
import conventions from '../../plugins/conventions/index.js'
import methods from '../../plugins/methods/index.js'
import { UA, build, headers, type Echo } from './app.js'

const body = JSON.stringify({ name: 'x' })

t.test('POST /echo accepts JSON only, in UTF-8', async t => {
  const app = await build(t)
  const cases: Array<[string | undefined, number, RegExp | null]> = [
    ['application/json', 200, null],
    ['application/json; charset=utf-8', 200, null],
    ['Application/JSON; charset="UTF-8"', 200, null],
    [undefined, 415, /^The request to POST \/echo has a body but no Content-Type header; send the body as application\/json\.$/],
    ['text/plain', 415, /^The Content-Type "text\/plain" is not accepted by POST \/echo; send the body as application\/json\.$/],
    ['application/merge-patch+json', 415, /"application\/merge-patch\+json" is not accepted by POST \/echo/],
    ['json', 415, /^The Content-Type "json" is not a valid media type; send the body as application\/json\.$/],
    ['application/json; charset', 415, /is not a valid media type/],
    ['application/json; charset=latin1', 415, /^The Content-Type "application\/json; charset=latin1" declares charset "latin1", but only UTF-8 is accepted/],
    // A parameter twice, whatever the values: which one the sender meant is unclear.
    ['application/json; charset=UTF-8; charset=iso-8859-1', 415, /^The Content-Type "application\/json; charset=UTF-8; charset=iso-8859-1" gives the parameter charset more than once; send the body as application\/json, each parameter once\.$/],
    ['application/json; charset=utf-8; CHARSET="UTF-8"', 415, /gives the parameter charset more than once/],
    ['application/json; a=1; charset=utf-8; a=1', 415, /gives the parameter a more than once/],
    ['application/json; a=1; b=2; charset=utf-8', 200, null]
  ]
  for (const [type, status, detail] of cases) {
    const res = await app.inject({ method: 'POST', url: '/echo', headers: headers({ 'content-type': type }), payload: body })
    t.equal(res.statusCode, status, `Content-Type ${String(type)} gives ${status}`)
    if (detail === null) {
      t.strictSame(res.json<Echo>().body, { name: 'x' })
    } else {
      t.match(res.json(), { title: 'Unsupported Media Type', status: 415, instance: '/echo', detail })
    }
  }
})

t.test('a body in a content coding is a 415 naming identity, the one coding read', async t => {
  const app = await build(t)
  const { gzipSync } = await import('node:zlib')
  const cases: Array<[string | undefined, Buffer | string, number]> = [
    ['gzip', gzipSync(body), 415],
    ['GZIP', gzipSync(body), 415],
    ['br', body, 415],
    ['gzip, identity', gzipSync(body), 415],
    ['identity', body, 200],
    [' Identity ', body, 200],
    [undefined, body, 200]
  ]
  for (const [coding, payload, status] of cases) {
    const res = await app.inject({ method: 'POST', url: '/echo', headers: headers({ 'content-type': 'application/json', 'content-encoding': coding }), payload })
    t.equal(res.statusCode, status, `Content-Encoding ${String(coding)}`)
    if (status === 200) continue
    t.equal(res.headers['accept-encoding'], 'identity', `${String(coding)}: the coding accepted`)
    t.match(res.json(), { title: 'Unsupported Media Type', instance: '/echo', detail: `The request's Content-Encoding ${JSON.stringify(coding)} is not accepted; send the body uncompressed, without Content-Encoding.` })
  }
  const get = await app.inject({ method: 'GET', url: '/echo', headers: headers({ 'content-encoding': 'gzip' }) })
  t.equal(get.statusCode, 200, 'a request without a body is not checked')
})

t.test('a body in a transfer coding other than chunked is a 400 naming the coding', async t => {
  const app = await build(t)
  const cases: Array<[string, number, string | null]> = [
    ['chunked', 200, null],
    ['Chunked', 200, null],
    ['gzip, chunked', 400, 'gzip'],
    ['GZIP , chunked', 400, 'gzip'],
    ['identity, chunked', 400, 'identity'],
    ['chunked, br', 400, 'br']
  ]
  for (const [coding, status, named] of cases) {
    const res = await app.inject({ method: 'POST', url: '/echo', headers: headers({ 'content-type': 'application/json', 'transfer-encoding': coding }), payload: body })
    t.equal(res.statusCode, status, `Transfer-Encoding ${coding}`)
    if (named === null) continue
    t.match(res.json(), { title: 'Bad Request', instance: '/echo', detail: `The request's Transfer-Encoding ${JSON.stringify(coding)} applies the coding ${JSON.stringify(named)}, which the service does not decode; send the body with Transfer-Encoding: chunked alone, or with a Content-Length.` })
  }
})

t.test('a transfer-coded body needs a Content-Type too', async t => {
  const app = await build(t)
  const res = await app.inject({ method: 'PUT', url: '/echo', headers: headers({ 'content-type': undefined, 'transfer-encoding': 'chunked' }) })
  t.equal(res.statusCode, 415)
  t.match(res.json().detail, /PUT \/echo has a body but no Content-Type header/)
})

t.test('requests without a body are not checked', async t => {
  const app = await build(t)
  const get = await app.inject({ method: 'GET', url: '/echo', headers: headers({ 'content-type': 'text/plain' }) })
  t.equal(get.statusCode, 200)
  const empty = await app.inject({ method: 'DELETE', url: '/echo', headers: headers({ 'content-type': 'text/plain', 'content-length': '0' }) })
  t.equal(empty.statusCode, 200)
})

t.test('GET, HEAD, DELETE and OPTIONS with a body are a 400 naming the method (the convention: they take none)', async t => {
  const app = await build(t, {}, (app) => {
    app.route({ method: ['HEAD', 'OPTIONS'], url: '/bodyless', handler: async (_request, reply) => await reply.code(204).send() })
    app.delete('/off', { config: { conventions: false } }, async (_request, reply) => await reply.code(204).send())
  })
  for (const [method, url] of [['GET', '/echo'], ['DELETE', '/echo'], ['HEAD', '/bodyless'], ['OPTIONS', '/bodyless']] as const) {
    for (const [how, extra] of [['a Content-Length', {}], ['chunked', { 'transfer-encoding': 'chunked' }]] as const) {
      const res = await app.inject({ method, url, headers: headers({ 'content-type': 'application/json', ...extra }), payload: body })
      t.equal(res.statusCode, 400, `${method} with ${how}`)
      if (method !== 'HEAD') t.match(res.json(), { title: 'Bad Request', status: 400, instance: url, detail: `${method === 'OPTIONS' ? 'An' : 'A'} ${method} request carries no body (the convention: GET, HEAD, DELETE and OPTIONS take none); send ${method} ${url} without one.` })
    }
  }
  const off = await app.inject({ method: 'DELETE', url: '/off', headers: headers({ 'content-type': 'application/json' }), payload: body })
  t.equal(off.statusCode, 204, 'a route with the conventions off takes what it is sent')

  // An OPTIONS the methods plugin answers, where no route of the path serves OPTIONS.
  const answered = Fastify()
  t.teardown(() => answered.close())
  await answered.register(problem)
  await answered.register(conventions)
  await answered.register(methods)
  answered.get('/things', async () => ({}))
  const options = await answered.inject({ method: 'OPTIONS', url: '/things', headers: headers({ 'content-type': 'application/json' }), payload: body })
  t.equal(options.statusCode, 400, 'OPTIONS with a body, answered by the methods plugin')
  t.match(options.json(), { detail: 'An OPTIONS request carries no body (the convention: GET, HEAD, DELETE and OPTIONS take none); send OPTIONS /things without one.' })
  const plain = await answered.inject({ method: 'OPTIONS', url: '/things', headers: headers() })
  t.strictSame([plain.statusCode, plain.headers.allow], [204, 'GET, HEAD, OPTIONS'], 'without one: its Allow')
  t.equal((await answered.inject({ method: 'GET', url: '/nothing', headers: headers({ 'content-type': 'application/json' }), payload: body })).statusCode, 404, 'a GET of no route stays a 404')
})

t.test('merge-patch routes parse application/merge-patch+json exactly like JSON', async t => {
  const app = await build(t)
  for (const type of ['application/merge-patch+json', 'application/json', 'application/merge-patch+json; charset=utf-8']) {
    const res = await app.inject({ method: 'PATCH', url: '/merge', headers: headers({ 'content-type': type }), payload: '{"name":null,"tags":["a"]}' })
    t.equal(res.statusCode, 200, type)
    t.strictSame(res.json<Echo>().body, { name: null, tags: ['a'] })
  }
  const refused = await app.inject({ method: 'PATCH', url: '/merge', headers: headers({ 'content-type': 'text/plain' }), payload: 'x' })
  t.equal(refused.statusCode, 415)
  t.equal(refused.json().detail, 'The Content-Type "text/plain" is not accepted by PATCH /merge; send the body as application/merge-patch+json or application/json.')
  // Same outcome as the JSON parser for broken and poisoned documents.
  for (const payload of ['{"name":', '{"__proto__":{"admin":true}}', '']) {
    const asJson = await app.inject({ method: 'PATCH', url: '/merge', headers: headers({ 'content-type': 'application/json' }), payload })
    const asMerge = await app.inject({ method: 'PATCH', url: '/merge', headers: headers({ 'content-type': 'application/merge-patch+json' }), payload })
    t.equal(asMerge.statusCode, asJson.statusCode, `same status for ${JSON.stringify(payload)}`)
    t.equal(asMerge.json().title, asJson.json().title)
  }
})

t.test('a PATCH refused for its Content-Type names the accepted types in Accept-Patch (RFC 5789 §2.2); other methods do not', async t => {
  const app = await build(t)
  const both = 'application/merge-patch+json, application/json'
  const cases: Array<[string, 'PATCH' | 'POST', string | undefined, string | undefined]> = [
    ['a type not accepted', 'PATCH', 'text/plain', both],
    ['no media type', 'PATCH', 'json', both],
    ['a charset other than UTF-8', 'PATCH', 'application/json; charset=latin1', both],
    ['a parameter twice', 'PATCH', 'application/json; a=1; a=2', both],
    ['no Content-Type', 'PATCH', undefined, both],
    ['not a PATCH', 'POST', 'text/plain', undefined]
  ]
  for (const [name, method, type, expected] of cases) {
    const res = await app.inject({ method, url: method === 'PATCH' ? '/merge' : '/echo', headers: headers({ 'content-type': type }), payload: '{}' })
    t.equal(res.statusCode, 415, name)
    t.equal(res.headers['accept-patch'], expected, `${name}: Accept-Patch`)
  }
  const coded = await app.inject({ method: 'PATCH', url: '/merge', headers: headers({ 'content-type': 'application/json', 'content-encoding': 'gzip' }), payload: '{}' })
  t.equal(coded.headers['accept-patch'], undefined, 'a content coding refused: the type was fine, Accept-Encoding says what to change')
  t.equal(coded.headers['accept-encoding'], 'identity')
})

t.test('+json types configured globally or per route get a JSON parser', async t => {
  const app = await build(t, { contentTypes: ['application/json', 'application/vnd.svc-thing+json'] }, app => {
    app.register(async child => {
      child.post('/child', { config: { conventions: { contentTypes: ['application/vnd.svc-child+json'] } } }, async request => ({ body: request.body }))
    })
  })
  const global = await app.inject({ method: 'POST', url: '/echo', headers: headers({ 'content-type': 'application/vnd.svc-thing+json' }), payload: body })
  t.equal(global.statusCode, 200)
  t.strictSame(global.json<Echo>().body, { name: 'x' })
  const child = await app.inject({ method: 'POST', url: '/child', headers: headers({ 'content-type': 'application/vnd.svc-child+json' }), payload: body })
  t.equal(child.statusCode, 200)
  t.strictSame(child.json<Echo>().body, { name: 'x' })

  const extra = await build(t, { jsonTypes: ['application/vnd.svc-extra+json'] }, app => {
    app.post('/extra', { config: { conventions: { contentTypes: ['application/vnd.svc-extra+json'] } } }, async request => ({ body: request.body }))
  })
  const res = await extra.inject({ method: 'POST', url: '/extra', headers: headers({ 'content-type': 'application/vnd.svc-extra+json' }), payload: body })
  t.strictSame(res.json<Echo>().body, { name: 'x' })
})

t.test('a parser registered before the plugin is kept', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, (_req, raw, done) => { done(null, { raw }) })
  await app.register(problem)
  await app.register(conventions)
  app.patch('/p', { config: { conventions: { contentTypes: ['application/merge-patch+json'] } } }, async request => ({ body: request.body }))
  const res = await app.inject({ method: 'PATCH', url: '/p', headers: { 'user-agent': UA, 'content-type': 'application/merge-patch+json' }, payload: '{}' })
  t.strictSame(res.json(), { body: { raw: '{}' } })
})

t.test('JSON bodies are strictly UTF-8: bad bytes are a 400, never U+FFFD stored in their place', async t => {
  const app = await build(t)
  const send = async (url: string, method: 'POST' | 'PATCH', type: string, payload: Buffer): Promise<{ statusCode: number, json: () => any }> =>
    await app.inject({ method, url, headers: headers({ 'content-type': type }), payload })
  const bad: Array<[string, Buffer]> = [
    ['a lone continuation byte', Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0x80]), Buffer.from('"}')])],
    ['Latin-1 é', Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from([0xe9]), Buffer.from('"}')])],
    ['a truncated sequence', Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xe2, 0x82]), Buffer.from('"}')])],
    ['an encoded surrogate', Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')])]
  ]
  for (const [name, payload] of bad) {
    for (const [url, method, type] of [['/echo', 'POST', 'application/json'], ['/merge', 'PATCH', 'application/merge-patch+json']] as const) {
      const res = await send(url, method, type, payload)
      t.equal(res.statusCode, 400, `${name} (${type})`)
      t.match(res.json(), { title: 'Bad Request', detail: 'The body is not valid UTF-8; send it encoded in UTF-8, the only charset accepted.' })
    }
  }
  const text = 'café ü 😀 ∑'
  const good = await send('/echo', 'POST', 'application/json', Buffer.from(JSON.stringify({ name: text })))
  t.equal(good.statusCode, 200)
  t.strictSame(good.json().body, { name: text }, 'valid UTF-8, multi-byte and astral, as sent')
  const bom = await send('/echo', 'POST', 'application/json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"x"}')]))
  t.strictSame(bom.json().body, { name: 'x' }, 'a byte order mark is dropped, as Fastify does')
  const refused: Array<[string, RegExp]> = [
    ['{"__proto__":{"x":1}}', /has a "__proto__" or "constructor.prototype" member, which is refused; remove it/],
    ['{"a":{"constructor":{"prototype":{"x":1}}}}', /has a "__proto__" or "constructor.prototype" member/],
    ['{"name":', /not valid JSON; correct its syntax/]
  ]
  for (const [payload, detail] of refused) {
    const res = await send('/echo', 'POST', 'application/json', Buffer.from(payload))
    t.equal(res.statusCode, 400, payload)
    t.match(res.json(), { title: 'Bad Request', detail }, `${payload}: the detail says what is wrong`)
  }
  const empty = await send('/echo', 'POST', 'application/json', Buffer.alloc(0))
  t.equal(empty.statusCode, 400, 'and an empty JSON body')
})

t.test('an application/json parser of the application is kept; with the Content-Type rule off, Fastify\'s stays', async t => {
  const own = Fastify()
  t.teardown(() => own.close())
  own.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, raw, done) => { done(null, { raw }) })
  await own.register(problem)
  await own.register(conventions)
  own.post('/p', async request => ({ body: request.body }))
  const kept = await own.inject({ method: 'POST', url: '/p', headers: { 'user-agent': UA, 'content-type': 'application/json' }, payload: Buffer.from([0x7b, 0x80, 0x7d]) })
  t.strictSame(kept.json(), { body: { raw: '{\ufffd}' } }, 'the application\'s parser decides')

  const off = await build(t, { contentType: false })
  const lax = await off.inject({ method: 'POST', url: '/echo', headers: headers({ 'content-type': 'application/json' }), payload: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0x80]), Buffer.from('"}')]) })
  t.equal(lax.statusCode, 200)
  t.strictSame(lax.json<Echo>().body, { name: '\ufffd' }, 'Fastify\'s own decoding')
})

t.test('unknown paths are not checked: their 404 stands', async t => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: '/nowhere', headers: headers({ 'content-type': 'text/plain' }), payload: 'x' })
  t.equal(res.statusCode, 404)
})

t.test('switched off globally, per route, or with every rule', async t => {
  const off = await build(t, { contentType: false })
  const res = await off.inject({ method: 'POST', url: '/echo', headers: headers({ 'content-type': 'text/plain' }), payload: 'hello' })
  t.equal(res.statusCode, 200)
  t.equal(res.json<Echo>().body, 'hello', "Fastify's text parser ran")

  const app = await build(t, {}, app => {
    app.post('/any', { config: { conventions: { contentType: false } } }, async request => ({ body: request.body }))
    app.post('/hook', { config: { conventions: false } }, async request => ({ body: request.body }))
  })
  for (const url of ['/any', '/hook']) {
    const r = await app.inject({ method: 'POST', url, headers: headers({ 'content-type': 'text/plain' }), payload: 'hello' })
    t.equal(r.statusCode, 200, url)
  }
})
