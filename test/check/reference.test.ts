import t from 'tap'
import { check, formatText, type CheckResult, type VerdictKind } from '../../check/index.js'
import { token } from '../resource/helper.js'
import { serviceClient, startService } from '../service/service.js'

// The reference service passes every rule the check can observe, read-only and with --writes:
// what is not a pass is exactly the rules that need what a run lacks (--writes, --origin) and
// the rules no probe can observe.
const ORIGIN = 'https://app.example'
const UNOBSERVABLE = ['headers.propagation', 'errors.server-errors', 'naming.english', 'webhooks.consumers']
const NEEDS_WRITES = ['methods.create', 'methods.put', 'methods.merge-patch', 'methods.if-match', 'methods.unmodified-since', 'methods.if-match-required', 'methods.delete', 'search.post', 'idempotency.replay', 'idempotency.reuse', 'bulk.response']

function table (result: CheckResult): Record<string, VerdictKind> {
  return Object.fromEntries(result.verdicts.map(v => [v.id, v.verdict]))
}

function expected (result: CheckResult, others: Record<string, VerdictKind>): Record<string, VerdictKind> {
  return Object.fromEntries(result.verdicts.map(v => [v.id, others[v.id] ?? 'pass']))
}

t.test('the reference service passes every rule, read-only and with --writes', async t => {
  const { base } = await startService(t, undefined, { CORS_ORIGINS: ORIGIN })
  // A service in use has data: enough for the paging, filter and ordering probes.
  const client = serviceClient(base)
  const authors: string[] = []
  for (const n of [1, 2, 3, 4]) authors.push((await client.call('POST', '/v1/authors', { name: `Author ${n}`, email: `author${n}@example.com` })).body.id as string)
  for (const n of [1, 2, 3]) await client.call('POST', '/v1/documents', { name: `Document ${n}`, authorId: authors[0], kind: 'INVOICE' })
  const scopes = ['authors:read', 'authors:write', 'documents:read', 'documents:write', 'webhooks:read', 'webhooks:write']

  // The 403 probe's token: accepted, with a scope that reads no collection.
  const limitedToken = token('limited', ['webhooks:read'])
  const readOnly = await check({ baseUrl: base, token: token('checker', scopes), limitedToken })
  const notChecked = Object.fromEntries([...UNOBSERVABLE, ...NEEDS_WRITES].map(id => [id, 'not checked' as const]))
  t.strictSame(table(readOnly), expected(readOnly, { ...notChecked, 'cors.allowed': 'not applicable', 'cors.headers': 'not applicable' }), 'read-only', { report: formatText(readOnly) })
  t.ok(readOnly.verdicts.length >= 50, 'every rule has its verdict')
  t.ok(readOnly.verdicts.filter(v => v.verdict === 'not checked' && NEEDS_WRITES.includes(v.id)).every(v => /--writes/.test(v.reason ?? '')), 'what needs --writes says so')

  const writes = await check({ baseUrl: base, token: token('checker', scopes), limitedToken, writes: true, origin: ORIGIN })
  t.strictSame(table(writes), expected(writes, Object.fromEntries(UNOBSERVABLE.map(id => [id, 'not checked' as const]))), 'with --writes and --origin', { report: formatText(writes) })
  // Its documents refer to an author that was there before: its own author is deleted too.
  t.strictSame(writes.leftBehind, [], 'nothing left behind')
  const after = await client.call('GET', '/v1/documents?limit=100')
  t.strictSame((after.body.results as Array<{ name: string }>).map(d => d.name).sort(), ['Document 1', 'Document 2', 'Document 3'], 'the check\'s own documents are gone from the collection')
  for (const [name, result] of [['read-only', readOnly], ['--writes', writes]] as const) {
    t.ok(result.requests <= 500, `${name}: within the default budget`)
    t.comment(`${name}: ${result.requests} requests in ${(result.durationMillis / 1000).toFixed(1)} s`)
  }
})
