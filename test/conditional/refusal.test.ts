import t from 'tap'
import { preconditionProblem, type PreconditionFailure } from '../../plugins/conditional/index.js'
import { ProblemError } from '../../plugins/problem/index.js'
import { client } from '../events/helper.js'
import { serviceClient, startService } from '../service/service.js'

// One wording of a 412 for every route that evaluates preconditions (refusal.ts): the table of
// its cases, then the reference service, where an author and a webhook subscription refuse the
// same conditions with the same problem, and a conditional GET with the read's.

const P = '/v1/things/1'
const cases: Array<[string, PreconditionFailure, string]> = [
  ['a read', { method: 'GET', path: P, header: 'If-Match' }, `If-Match does not match the current ETag of ${P}; GET it again and retry with its ETag.`],
  ['a HEAD', { method: 'HEAD', path: P, header: 'If-Match' }, `If-Match does not match the current ETag of ${P}; GET it again and retry with its ETag.`],
  ['a DELETE, If-Match', { method: 'DELETE', path: P, header: 'If-Match' }, `The conditions of If-Match / If-None-Match do not hold for ${P}; GET it again and retry with its ETag.`],
  ['a DELETE, If-None-Match', { method: 'DELETE', path: P, header: 'If-None-Match' }, `The conditions of If-Match / If-None-Match do not hold for ${P}; GET it again and retry with its ETag.`],
  ['a PUT that would create', { method: 'PUT', path: P, header: 'If-None-Match', creates: true }, `${P} already exists, and If-None-Match: * only creates; send If-Match with its ETag to replace it.`],
  ['a PATCH, If-Match', { method: 'PATCH', path: P, header: 'If-Match' }, `If-Match does not match the current ETag of ${P}; GET it again, reapply your change and retry with its ETag.`],
  ['a PUT, If-Match', { method: 'PUT', path: P, header: 'If-Match' }, `If-Match does not match the current ETag of ${P}, or it does not exist; GET it again and retry with its ETag.`],
  ['an action, If-Match', { method: 'POST', path: P, header: 'If-Match' }, `If-Match does not match the current ETag of ${P}, or it does not exist; GET it again and retry with its ETag.`],
  ['a PATCH, If-None-Match', { method: 'PATCH', path: P, header: 'If-None-Match' }, `If-None-Match matches the current ETag of ${P}; it was not changed.`],
  ['a PUT, If-None-Match', { method: 'PUT', path: P, header: 'If-None-Match' }, `If-None-Match matches the current ETag of ${P}; it was not replaced.`],
  ['a read, If-Unmodified-Since', { method: 'GET', path: P, header: 'If-Unmodified-Since' }, `${P} has changed since the date in If-Unmodified-Since; read it without the condition.`],
  ['a PATCH, If-Unmodified-Since', { method: 'PATCH', path: P, header: 'If-Unmodified-Since' }, `${P} has changed since the date in If-Unmodified-Since; GET it again, reapply your change and retry.`],
  ['a DELETE, If-Unmodified-Since', { method: 'DELETE', path: P, header: 'If-Unmodified-Since' }, `${P} has changed since the date in If-Unmodified-Since; GET it again and retry.`],
  ['a PUT, If-Unmodified-Since', { method: 'PUT', path: P, header: 'If-Unmodified-Since' }, `${P} has changed since the date in If-Unmodified-Since; GET it again and retry.`]
]

t.test('preconditionProblem: a 412 worded by the request and the condition that failed', async t => {
  for (const [name, failure, detail] of cases) {
    const problem = preconditionProblem(failure)
    t.ok(problem instanceof ProblemError, `${name}: a problem`)
    t.match(problem, { statusCode: 412, detail, instance: P }, name)
  }
})

t.test('the reference service: authors, webhook subscriptions and a conditional GET refuse alike', async t => {
  const { base } = await startService(t, undefined, { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' })
  const { call } = serviceClient(base)
  const hooks = client(base)
  const author = await call('POST', '/v1/authors', { name: 'Ada', email: 'ada@example.com' })
  t.equal(author.status, 201, 'an author')
  const subscription = await hooks('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/in', events: ['author.created'] })
  t.equal(subscription.status, 201, 'a subscription')
  const targets = [
    { name: 'an author', path: `/v1/authors/${author.body.id as string}`, etag: author.headers.get('etag') as string, send: call, patch: { name: 'Ada L.' } },
    { name: 'a webhook subscription', path: `/v1/webhook-subscriptions/${subscription.body.id as string}`, etag: subscription.headers.get('etag') as string, send: hooks, patch: { description: 'changed' } }
  ]
  // No conditions given: If-None-Match of the target's current ETag.
  const requests: Array<[string, string, Record<string, string>, PreconditionFailure['header']]> = [
    ['PATCH', 'a stale If-Match', { 'if-match': '"stale"' }, 'If-Match'],
    ['PATCH', 'If-None-Match of the current ETag', {}, 'If-None-Match'],
    ['DELETE', 'a stale If-Match', { 'if-match': '"stale"' }, 'If-Match'],
    ['DELETE', 'If-None-Match of the current ETag', {}, 'If-None-Match'],
    ['GET', 'a stale If-Match', { 'if-match': '"stale"' }, 'If-Match'],
    ['PATCH', 'a date before its creation in If-Unmodified-Since', { 'if-unmodified-since': 'Sun, 06 Nov 1994 08:49:37 GMT' }, 'If-Unmodified-Since'],
    ['DELETE', 'a date before its creation in If-Unmodified-Since', { 'if-unmodified-since': 'Sun, 06 Nov 1994 08:49:37 GMT' }, 'If-Unmodified-Since'],
    ['GET', 'a date before its creation in If-Unmodified-Since', { 'if-unmodified-since': 'Sun, 06 Nov 1994 08:49:37 GMT' }, 'If-Unmodified-Since']
  ]
  for (const target of targets) {
    for (const [method, what, given, header] of requests) {
      const conditions = Object.keys(given).length > 0 ? given : { 'if-none-match': target.etag }
      const answer = await target.send(method, target.path, method === 'PATCH' ? target.patch : undefined, conditions)
      const expected = preconditionProblem({ method, path: target.path, header }) as ProblemError
      t.equal(answer.status, 412, `${target.name}: ${method} with ${what} is a 412`)
      t.equal(answer.body?.detail, expected.detail, `${target.name}: ${method} with ${what} is worded as every route words it`)
      t.equal(answer.body?.instance, target.path, `${target.name}: ${method} with ${what} names the entity`)
    }
  }
})
