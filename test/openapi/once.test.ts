import t from 'tap'
import { foldProblems, problemsDescription, stateHeadersOnce } from '../../plugins/openapi/once.js'

type Doc = Record<string, any>

const problem = (headers?: Doc): Doc => ({
  description: 'A problem.',
  ...(headers === undefined ? {} : { headers }),
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } }
})
const retryAfter = { schema: { type: 'integer' }, description: 'Seconds to wait.' }
const challenge = { schema: { type: 'string' }, description: 'The Bearer challenge.' }

t.test('problemsDescription names the statuses, in order, and when each applies', async t => {
  t.match(problemsDescription([400, 404, 500]), /^A problem \(RFC 9457\): 400, 404 or 500, as the operation allows/)
  t.match(problemsDescription([500]), /^A problem \(RFC 9457\): 500, as/)
  t.match(problemsDescription([400, 401]), /401 where it takes a token, 404 where it names an item, 413 and 415 where it takes a body/)
})

t.test('foldProblems: the statuses any operation may answer become its default response', async t => {
  const paths: Doc = {
    '/a/{id}': {
      get: {
        responses: {
          200: { description: 'OK', content: { 'application/json': { schema: { type: 'object' } } } },
          401: problem({ 'WWW-Authenticate': challenge }),
          404: problem(),
          409: problem(),
          429: problem({ 'Retry-After': retryAfter }),
          500: problem()
        }
      },
      options: { responses: { 204: { description: 'No Content' }, 400: problem(), 500: problem() } }
    },
    '/b': { get: { responses: { 200: { description: 'OK' }, default: { description: 'Their own' }, 500: problem() } } },
    '/c': { get: { responses: { 200: { description: 'OK' }, 409: problem() } } },
    '/d': { get: { responses: { 200: { description: 'OK' }, 500: { description: 'Not a problem body' } } } }
  }
  foldProblems(paths, [500, 400, 401, 404, 429])
  const get = paths['/a/{id}'].get.responses
  t.strictSame(Object.keys(get).sort(), ['200', '409', 'default'], 'a status the operation itself refuses stays listed')
  t.equal(get.default.description, problemsDescription([400, 401, 404, 429, 500]), 'one description for every default, the statuses sorted')
  t.strictSame(get.default.headers, { 'WWW-Authenticate': challenge, 'Retry-After': retryAfter }, 'the headers of every folded status')
  t.strictSame(get.default.content, { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } })
  t.strictSame(Object.keys(paths['/a/{id}'].options.responses).sort(), ['204', 'default'])
  t.notOk('headers' in paths['/a/{id}'].options.responses.default, 'no headers: none to list')
  t.strictSame(paths['/b'].get.responses, { 200: { description: 'OK' }, default: { description: 'Their own' }, 500: problem() }, 'an operation with its own default keeps its responses')
  t.strictSame(paths['/c'].get.responses, { 200: { description: 'OK' }, 409: problem() }, 'nothing to fold: no default')
  t.strictSame(paths['/d'].get.responses, { 200: { description: 'OK' }, 500: { description: 'Not a problem body' } }, 'only problem bodies fold')
})

t.test('stateHeadersOnce: the headers of every operation move to the document, once', async t => {
  const ua = { in: 'header', name: 'User-Agent', required: true, schema: { type: 'string' } }
  const rid = { in: 'header', name: 'X-Request-ID', schema: { type: 'string' } }
  const key = { in: 'header', name: 'Svc-Idempotency-Key', schema: { type: 'string' } }
  const limit = { in: 'query', name: 'X-Request-ID', schema: { type: 'string' } }
  const echoed = { schema: { type: 'string' }, description: 'Echoed.' }
  const etag = { schema: { type: 'string' }, description: 'The ETag.' }
  const lang = { schema: { type: 'string' }, description: 'en-US' }
  const doc: Doc = {
    info: { title: 'T', version: '1', description: 'About T.' },
    paths: {
      '/a': {
        parameters: [ua],
        get: { parameters: [rid, limit], responses: { 200: { description: 'OK', headers: { 'X-Request-ID': echoed, ETag: etag, 'Content-Language': lang } }, default: { description: 'P', headers: { 'X-Request-ID': echoed } } } },
        post: { parameters: [rid, key], responses: { 201: { description: 'Created', headers: { 'X-Request-ID': echoed, 'Content-Language': { ...lang, description: 'fr' } } }, 202: { description: 'Accepted' } } }
      }
    }
  }
  const out = stateHeadersOnce(doc, { request: ['User-Agent', 'X-Request-ID', 'Svc-Service'], response: ['X-Request-ID', 'Content-Language'] }) as Doc
  t.strictSame(out['x-request-headers'], [ua, rid], 'the request headers, as parameters, in the order first met')
  t.strictSame(out['x-response-headers'], { 'X-Request-ID': echoed }, 'a header defined two ways stays where it is')
  t.notOk('parameters' in out.paths['/a'], 'a path left without parameters has none')
  t.strictSame(out.paths['/a'].get.parameters, [limit], 'a query parameter of the same name stays')
  t.strictSame(out.paths['/a'].post.parameters, [key])
  t.strictSame(out.paths['/a'].get.responses[200].headers, { ETag: etag, 'Content-Language': lang })
  t.notOk('headers' in out.paths['/a'].get.responses.default, 'a response left without headers has none')
  t.strictSame(out.paths['/a'].post.responses[201].headers, { 'Content-Language': { ...lang, description: 'fr' } })
  t.equal(out.info.description, 'About T.\n\nHeaders the convention defines for every operation are described once, not on each: requests send those of `x-request-headers` (User-Agent, X-Request-ID) and answers carry those of `x-response-headers` (X-Request-ID), wherever their rule applies, as each one\'s description says.')
  t.strictSame(doc.paths['/a'].parameters, [ua], 'the input is not changed')

  const quiet = stateHeadersOnce({ info: { title: 'T', version: '1' }, paths: { '/a': { get: { responses: { 200: { description: 'OK', headers: { ETag: etag } } } } } } }, { request: ['User-Agent'], response: ['X-Request-ID'] }) as Doc
  t.notOk('x-request-headers' in quiet || 'x-response-headers' in quiet, 'nothing to state: no extension')
  t.notOk('description' in quiet.info, 'and no sentence')
  const noInfo = stateHeadersOnce({ paths: { '/a': { get: { responses: { 200: { description: 'OK', headers: { 'X-Request-ID': echoed } } } } } } }, { request: [], response: ['X-Request-ID'] }) as Doc
  t.match(noInfo.info.description, /^Headers the convention defines/, 'a document without info gets one for the sentence')
  t.strictSame(out.paths['/a'].post.responses[202], { description: 'Accepted' }, 'a response without headers stays as it is')
  const onlyAnswers = stateHeadersOnce({ info: { title: 'T', version: '1' }, paths: { '/a': { get: { responses: { 200: { description: 'OK', headers: { 'X-Request-ID': echoed } } } } } } }, { request: ['User-Agent'], response: ['X-Request-ID'] }) as Doc
  t.match(onlyAnswers.info.description, /^Headers the convention defines for every operation are described once, not on each: answers carry those of `x-response-headers` \(X-Request-ID\), wherever/, 'one side only')
})
