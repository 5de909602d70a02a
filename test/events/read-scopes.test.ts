import t from 'tap'
import { pglite } from '../support/databases.js'
import { BACKGROUND, countStatements } from '../support/count-statements.js'
import { client, receiver, startEvents } from './helper.js'

// A subscription's deliveries carry the entities of its events: with eventReadScopes (the
// plugin's default) naming a resource's events needs that resource's read scopes as well as
// webhooks:write; the reference service keeps its contract's webhooks:write alone.

const WEBHOOKS = ['webhooks:read', 'webhooks:write']
const PATH = '/v1/webhook-subscriptions'

t.test('the reference service: webhooks:write alone subscribes to any event, as its contract says', async t => {
  const store = await pglite.create(t)
  const { base } = await startEvents(t, store)
  const hook = await receiver(t)
  const res = await client(base, WEBHOOKS)('POST', PATH, { url: hook.url, events: ['document.created', 'author.created'] })
  t.equal(res.status, 201)
})

t.test('with eventReadScopes, a resource\'s events need its read scopes', async t => {
  const store = await pglite.create(t)
  const { base } = await startEvents(t, store, {}, { eventReadScopes: true, extraEventTypes: ['billing.closed'] })
  const hook = await receiver(t)
  const admin = client(base)
  const cases: Array<[string, string[], string[], number, string | null]> = [
    ['webhooks alone, a document event', WEBHOOKS, ['document.created'], 403, 'documents:read'],
    ['webhooks alone, events of two resources', WEBHOOKS, ['author.created', 'document.created', 'document.updated'], 403, 'authors:read documents:read'],
    ['authors:read, an author and a document event', [...WEBHOOKS, 'authors:read'], ['author.created', 'document.created'], 403, 'documents:read'],
    ['authors:read, an application\'s own event and a document event', [...WEBHOOKS, 'authors:read'], ['billing.closed', 'document.created'], 403, 'documents:read'],
    ['authors:read, author events', [...WEBHOOKS, 'authors:read'], ['author.created', 'author.deleted'], 201, null],
    ['webhooks alone, an event of no resource', WEBHOOKS, ['billing.closed'], 201, null],
    ['both read scopes', [...WEBHOOKS, 'authors:read', 'documents:read'], ['author.created', 'document.published'], 201, null]
  ]
  for (const [name, scopes, events, status, missing] of cases) {
    const res = await client(base, scopes)('POST', PATH, { url: hook.url, events })
    t.equal(res.status, status, name)
    if (missing === null) continue
    t.equal(res.headers.get('www-authenticate'), `Bearer error="insufficient_scope", scope="webhooks:write ${missing}"`, `${name}: the scopes needed`)
    // Conventions, Common errors: a 403's detail names the path.
    t.match(res.body, { status: 403, title: 'Forbidden', instance: PATH, detail: `POST ${PATH}` })
    const named = events.filter(e => !e.startsWith('billing') && missing.includes(`${e.split('.')[0] as string}s:read`))
    t.match(res.body.detail, `does not grant the scope${missing.includes(' ') ? 's' : ''} ${missing.replace(' ', ', ')} that a subscription to ${named.join(', ')} needs`, `${name}: the detail names the scopes and the events`)
  }
  t.equal((await admin('GET', PATH)).body.results.length, 3, 'the refused ones were not created')

  const { body: created, headers } = await admin('POST', PATH, { url: hook.url, events: ['document.created'] })
  const item = `${PATH}/${created.id as string}`
  const etag = headers.get('etag') as string
  const webhooksOnly = client(base, WEBHOOKS)
  const moved = await webhooksOnly('PATCH', item, { url: `${hook.url}/elsewhere` }, { 'if-match': etag })
  t.equal(moved.status, 403, 'a new URL for document events needs documents:read: it would receive the documents')
  t.match(moved.body.detail, /documents:read that a subscription to document\.created needs/)
  t.match(moved.body, { instance: item, detail: `PATCH ${item}` }, 'the detail names the path')
  t.equal((await webhooksOnly('PATCH', item, { events: ['author.created'] })).status, 403, 'so do new events')
  const described = await webhooksOnly('PATCH', item, { description: 'orders', active: false }, { 'if-match': etag })
  t.equal(described.status, 204, 'changing neither the URL nor the events needs no read scope')
  const billing = await webhooksOnly('PATCH', item, { events: ['billing.closed'], url: `${hook.url}/billing` })
  t.equal(billing.status, 204, 'nor do events of no resource, at a new URL')
  // A new URL alone: its statement checks that the events stored are all ones the caller may read.
  const sql = countStatements(store)
  t.teardown(() => { sql.restore() })
  const elsewhere = await webhooksOnly('PATCH', item, { url: `${hook.url}/billing-elsewhere` }, { 'if-match': billing.headers.get('etag') as string })
  t.equal(elsewhere.status, 204, 'a new URL alone for events the caller may read')
  const sent = sql.texts().filter(text => !BACKGROUND.test(text))
  t.equal(sent.length, 1, 'one statement', { sent })
  t.match(sent[0], /events <@ \$\d+::text\[\]/, 'which checks the events')
  sql.restore()
  t.equal((await admin('GET', item)).body.url, `${hook.url}/billing-elsewhere`)
  t.equal((await client(base, [...WEBHOOKS, 'documents:read'])('PATCH', item, { events: ['document.updated'] })).status, 204, 'with the read scope')
  t.equal((await webhooksOnly('DELETE', item)).status, 204, 'deleting needs webhooks:write alone')
})
