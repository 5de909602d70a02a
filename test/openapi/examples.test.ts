import t from 'tap'
import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import openapi from '../../plugins/openapi/index.js'
import { problemExample } from '../../plugins/openapi/examples.js'
import { OPTIONAL_BODY, optionalBodies } from '../../plugins/openapi/document.js'
import { Problem } from '../../schemas/problem.js'

// Issue 42: each problem response shows an example of its own status; a body a route does not
// require is not marked required.

t.test('problemExample: the status, its title as the service gives it, a detail and a requestId', async t => {
  // [status, title, detail]
  const table: Array<[number, string, RegExp]> = [
    [401, 'Unauthorized', /^The access token was not accepted\.$/],
    [404, 'Not Found', /^No document has the id/],
    [409, 'Conflict', /taken/],
    [412, 'Precondition Failed', /If-Match/],
    [428, 'Precondition Required', /If-Match is required/],
    [503, 'Service Unavailable', /^Retry after/],
    // No detail of its own: a status of Node's list, and one of none.
    [418, "I'm a Teapot", /^I'm a Teapot: see when the operation answers 418\.$/],
    [599, 'Internal Server Error', /answers 599/]
  ]
  for (const [status, title, detail] of table) {
    t.match(problemExample(status), { status, title, detail, requestId: 'trace-1' }, String(status))
  }
  t.strictSame(problemExample(400), (Problem.examples as unknown[])[0], '400: the Problem schema\'s own example, Invalid Data with a context item')
})

t.test('optionalBodies: a marked operation\'s body is not required; the marker goes', async t => {
  const paths: Record<string, any> = {
    '/a': {
      post: { [OPTIONAL_BODY]: true, requestBody: { required: true, content: {} } },
      put: { requestBody: { required: true, content: {} } },
      // Marked, without a body to mark: nothing to change but the marker.
      patch: { [OPTIONAL_BODY]: true }
    }
  }
  optionalBodies(paths)
  t.strictSame(paths, { '/a': { post: { requestBody: { required: false, content: {} } }, put: { requestBody: { required: true, content: {} } }, patch: {} } })
})

t.test('config.openapi.optionalBody: the document says the body may be left out', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(openapi)
  const body = Type.Object({}, { additionalProperties: false })
  app.post('/v1/things/:id/start', { schema: { body }, config: { openapi: { optionalBody: true } } }, async () => ({}))
  app.post('/v1/things', { schema: { body } }, async () => ({}))
  await app.ready()
  const doc = app.swagger() as unknown as { paths: Record<string, Record<string, { requestBody: { required: boolean } }>> }
  t.equal(doc.paths['/v1/things/{id}/start']?.post?.requestBody.required, false)
  t.equal(doc.paths['/v1/things']?.post?.requestBody.required, true, 'a body is required otherwise')
  await app.close()
})
