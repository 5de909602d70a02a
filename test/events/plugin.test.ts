import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { conventions, createStore, events, problem, query, validation, type EventsPluginOptions, type Store } from '../../index.js'
import { CURSOR_SECRET } from '../resource/helper.js'
import { receiver, verify } from './helper.js'

// The events plugin alone, without the resource plugin: options checked at boot, an
// application's own events emitted and delivered, the routes in a bare app.

const SERVICE = { id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'alone' }
const store: Store = createStore({ dataDir: 'memory' })
t.teardown(() => store.close())

/**
 * An app with the events plugin on the file's one store, closed when `owner`, the test that
 * boots it, ends: every app that boots delivers, and one left running would claim the
 * deliveries a later test waits for (without insecure targets, to fail them and retry in
 * minutes).
 */
async function app (opts: Partial<EventsPluginOptions>, prereqs: boolean, owner: { teardown: (fn: () => unknown) => void }): Promise<FastifyInstance> {
  const a = Fastify()
  owner.teardown(() => a.close())
  if (prereqs) {
    await a.register(problem)
    await a.register(validation)
    await a.register(conventions, { userAgent: false })
    await a.register(query, { cursorSecret: CURSOR_SECRET })
  }
  await a.register(events, { store, service: SERVICE, eventTypes: ['order.shipped'], withoutAuth: true, ...opts } as EventsPluginOptions)
  return a
}

t.test('options are checked at boot, naming the option', async t => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['store', { store: {} }, /store must be a Store/],
    ['workerStore', { workerStore: 'postgres://db/app' }, /workerStore must be a Store \(createStore\) on the same database as store/],
    ['service', { service: { id: 'x', name: 'alone' } }, /service must be/],
    ['path', { path: 'hooks' }, /path must be an absolute path/],
    ['readScopes', { readScopes: 'webhooks:read' }, /readScopes must be an array/],
    ['retrySchedule text', { retrySchedule: '5s,soon' }, /retrySchedule must be/],
    ['retrySchedule numbers', { retrySchedule: [1, -1] }, /retrySchedule must be/],
    ['allowInsecureTargets', { allowInsecureTargets: 'yes' }, /allowInsecureTargets must be a boolean/],
    ['eventReadScopes', { eventReadScopes: 'yes' }, /eventReadScopes must be a boolean/],
    ['allowInsecureTargetsHint', { allowInsecureTargetsHint: ' ' }, /allowInsecureTargetsHint must be a non-empty string or false, got " "/],
    ['allowInsecureTargetsHint type', { allowInsecureTargetsHint: true }, /allowInsecureTargetsHint must be a non-empty string or false, got true/],
    ['worker', { worker: 1 }, /worker must be a boolean/],
    ['timeoutMillis', { timeoutMillis: 0 }, /timeoutMillis must be a positive integer/],
    ['userAgent', { userAgent: 'alone/1' }, /^events plugin: userAgent must be an object/],
    ['userAgent.version', { userAgent: { product: 'alone', version: 'one' } }, /^events plugin: userAgent.version must be the major version, digits only, got "one"/],
    ['tablePrefix', { tablePrefix: 'Bad-Name' }, /tablePrefix must be a lowercase SQL name/],
    ['resolver', { resolver: 'dns' }, /resolver must be a function/],
    ['now', { now: 0 }, /now must be a function/],
    ['retention', { retention: '7d' }, /events plugin: retention must be a positive integer, got "7d"/],
    ['purgeInterval', { purgeInterval: -1 }, /purgeInterval must be 0 \(never\) or a positive integer of milliseconds/],
    ['eventTypes', { eventTypes: [] }, /there are no event types/],
    // extraEventTypes adds to the default list, which eventTypes replaces: with both, it would be dropped unseen.
    ['eventTypes and extraEventTypes', { extraEventTypes: ['order.paid'] }, /^events plugin: extraEventTypes adds to the default event types, which eventTypes replaces; give one of them \(list order\.paid in eventTypes\)$/],
    ['eventTypes a subscription cannot name', { eventTypes: ['order.shipped_v2', 'invoice.payment.succeeded', 'Order.Shipped', 'order.paid', '3d.created'] }, /^events plugin: the event types "order\.shipped_v2", "invoice\.payment\.succeeded", "Order\.Shipped", "3d\.created" cannot be subscribed to: an event type is <name>\.<event>/],
    ['an event type over 100 characters', { eventTypes: [`order.${'x'.repeat(95)}`] }, /cannot be subscribed to/],
    ['unknown', { tableprefix: 'x' }, /tableprefix/]
  ]
  for (const [name, opts, message] of cases) await t.rejects(app(opts, true, t), message, name)
  await t.rejects(app({}, false, t), /needs the problem, conventions and query plugins/, 'its dependencies first')
  // The routes' scopes are checked by the auth plugin alone: without it they would let anyone in.
  await t.rejects(app({ withoutAuth: undefined }, true, t), { code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED', message: /^The events plugin serves routes that require the token scopes webhooks:read and webhooks:write, which only the auth plugin checks/ }, 'scopes without auth')
  await t.rejects(app({ withoutAuth: 1 as never }, true, t), /^events plugin: withoutAuth must be a boolean, got 1$/, 'withoutAuth')
  await t.resolves(app({ withoutAuth: undefined, readScopes: [], writeScopes: [] }, true, t), 'no scopes: nothing to check')
  await t.resolves(app({ withoutAuth: undefined, path: false }, true, t), 'no routes: nothing to check')
})

// Node takes a longer timer delay as 1 ms: every attempt would time out at once, the idle poll spin.
t.test('milliseconds that reach a timer: up to 2147483647, the longest a timer waits', async t => {
  const rule = 'a positive integer of milliseconds up to 2147483647 (about 24.8 days, the longest a timer waits)'
  const table: Array<[string, string]> = [
    ['timeoutMillis', rule],
    ['pollMillis', rule],
    ['purgeInterval', `0 (never) or ${rule}`]
  ]
  for (const [option, wanted] of table) {
    await t.resolves(async () => { await (await app({ [option]: 2147483647 }, true, t)).ready() }, `${option}: 2147483647`)
    await t.rejects(app({ [option]: 2147483648 }, true, t), { name: 'TypeError', message: `events plugin: ${option} must be ${wanted}, got 2147483648` }, `${option}: 2147483648`)
  }
})

t.test('an application\'s own event, emitted in its transaction, delivered signed; one rolled back is not', async t => {
  const hook = await receiver(t)
  const a = await app({ allowInsecureTargets: true, pollMillis: 20, path: '/hooks', readScopes: [], writeScopes: [], retrySchedule: '10ms' }, true, t)
  await a.listen({ port: 0, host: '127.0.0.1' })
  const created = await a.inject({ method: 'POST', url: '/hooks', payload: { url: hook.url, events: ['order.shipped'], description: 'all orders' } })
  t.equal(created.statusCode, 201, created.body)
  const sub = JSON.parse(created.body)
  await store.transaction(async (tx) => {
    await a.events.emit(tx, [
      { ctx: 'prod', type: 'order.shipped', data: { id: 'o-1' }, requestId: 'r-1' },
      { ctx: 'prod', type: 'order.shipped', data: '{"id":"o-2"}' },
      { ctx: 'preprod', type: 'order.shipped', data: { id: 'o-3' } }
    ])
  })
  await t.rejects(store.transaction(async (tx) => {
    await a.events.emit(tx, { ctx: 'prod', type: 'order.shipped', data: { id: 'rolled-back' } })
    throw new Error('the change failed')
  }))
  a.events.wake()
  await hook.waitFor(2)
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.strictSame(hook.got.map(r => r.json.data).sort((x, y) => x.id < y.id ? -1 : 1), [{ id: 'o-1' }, { id: 'o-2' }], 'prod only, nothing rolled back')
  for (const r of hook.got) verify(sub.secret, r)
  t.strictSame(hook.got.map(r => r.headers['x-request-id'] ?? null).sort(), ['r-1', null].sort())
  t.strictSame(a.events.types, ['order.shipped'])
  const list = await a.inject({ url: '/hooks?limit=1' })
  t.equal(list.statusCode, 200)
  t.equal(JSON.parse(list.body).results.length, 1)
  const patched = await a.inject({ method: 'PATCH', url: `/hooks/${sub.id as string}`, headers: { 'content-type': 'application/merge-patch+json' }, payload: { description: null } })
  t.equal(patched.statusCode, 204, 'merge patches parsed without the resource plugin')
  const spare = JSON.parse((await a.inject({ method: 'POST', url: '/hooks', payload: { url: hook.url, events: ['order.shipped'] } })).body)
  t.equal((await a.inject({ method: 'DELETE', url: `/hooks/${spare.id as string}` })).statusCode, 204, 'deleted without the conditional plugin')
  t.equal((await a.inject({ url: `/hooks/${spare.id as string}` })).statusCode, 404)
  t.equal((await a.inject({ url: '/hooks/nope/deliveries' })).statusCode, 404)
})

t.test('a worker-less instance records events and serves no routes with path: false', async t => {
  const a = await app({ worker: false, path: false, purgeInterval: 0, tablePrefix: 'quiet' }, true, t)
  await a.ready()
  a.events.wake()
  t.equal((await a.inject({ url: '/webhook-subscriptions' })).statusCode, 404)
  await store.transaction(async (tx) => { await a.events.emit(tx, { ctx: 'prod', type: 'order.shipped', data: {} }) })
  t.pass('emitted with no subscriber')
})

t.test('a refused target names the setting that allows it: the option by default, a service\'s own words, or nothing', async t => {
  const refusal = async (opts: Partial<EventsPluginOptions>, url: string): Promise<{ status: number, detail: string, message: string }> => {
    const a = await app({ worker: false, readScopes: [], writeScopes: [], purgeInterval: 0, ...opts }, true, t)
    const res = await a.inject({ method: 'POST', url: '/webhook-subscriptions', payload: { url, events: ['order.shipped'] } })
    const body = res.json()
    return { status: res.statusCode, detail: body.detail, message: body.context?.[0]?.message }
  }
  t.match(await refusal({}, 'http://hooks.example.com/in'), {
    status: 400,
    message: 'must be an https:// URL (in local development, the allowInsecureTargets option of the events plugin allows it)',
    detail: 'The url breaks a rule for webhook targets: it must be an https:// URL (in local development, the allowInsecureTargets option of the events plugin allows it).'
  })
  t.match(await refusal({ allowInsecureTargetsHint: 'HOOKS_INSECURE=1' }, 'https://127.0.0.1:8443/in'), {
    status: 400,
    message: 'must not resolve to a loopback, private, link-local or other internal address (in local development, HOOKS_INSECURE=1 allows it)'
  })
  t.match(await refusal({ allowInsecureTargetsHint: false }, 'http://hooks.example.com/in'), { status: 400, message: 'must be an https:// URL' })
})

t.test('an unavailable database is a 503, naming nothing of the fault', async t => {
  const own = createStore({ dataDir: 'memory' })
  const a = Fastify()
  t.teardown(() => a.close())
  await a.register(problem)
  await a.register(validation)
  await a.register(conventions, { userAgent: false })
  await a.register(query, { cursorSecret: CURSOR_SECRET })
  await a.register(events, { store: own, service: SERVICE, eventTypes: ['order.shipped'], worker: false, readScopes: [], withoutAuth: true })
  await a.ready()
  await own.close()
  const res = await a.inject({ url: '/webhook-subscriptions' })
  t.equal(res.statusCode, 503)
  t.notMatch(res.body, /closed|PGlite|SQL/i)
})

t.test('ended deliveries are deleted after their retention', async t => {
  // Its own ended delivery, so that the test does not depend on those of the tests above.
  await store.query('INSERT INTO event_subscriptions (ctx, id, url, events, secret, etag) VALUES (\'prod\', \'retained\', \'https://example.com/hook\', \'{order.shipped}\', \'x\', \'"e"\')')
  await store.query(`INSERT INTO event_deliveries (ctx, id, subscription_id, event_type, payload, status, created_at, ended_at)
    VALUES ('prod', 'ended', 'retained', 'order.shipped', '{}', 'SUCCEEDED', now() - interval '1 minute', now() - interval '1 minute')`)
  const before = (await store.query<{ n: number }>('SELECT count(*)::int AS n FROM event_deliveries WHERE ended_at IS NOT NULL')).rows[0]?.n as number
  t.ok(before > 0, 'an ended delivery to delete')
  await app({ worker: false, path: false, retention: 1, purgeInterval: 20 }, true, t)
  for (let i = 0; i < 100; i++) {
    if ((await store.query<{ n: number }>('SELECT count(*)::int AS n FROM event_deliveries WHERE ended_at IS NOT NULL')).rows[0]?.n === 0) break
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  t.equal((await store.query<{ n: number }>('SELECT count(*)::int AS n FROM event_deliveries WHERE ended_at IS NOT NULL')).rows[0]?.n, 0)
})

t.test('the retention of an ended delivery is measured by the plugin\'s clock, the one its end was recorded by', async t => {
  const clock = new Date('2020-01-01T00:00:00Z')
  const day = 24 * 60 * 60 * 1000
  await app({ worker: false, path: false, tablePrefix: 'clocked', retention: day, purgeInterval: 10, now: () => clock }, true, t)
  await store.query('INSERT INTO clocked_subscriptions (ctx, id, url, events, secret, etag) VALUES (\'prod\', \'s\', \'https://example.com/hook\', \'{order.shipped}\', \'x\', \'"e"\')')
  // [id, ended how long before the clock's now]
  const cases: Array<[string, number]> = [['past', 2 * day], ['kept', 60 * 60 * 1000]]
  for (const [id, ago] of cases) {
    await store.query(`INSERT INTO clocked_deliveries (ctx, id, subscription_id, event_type, payload, status, created_at, ended_at)
      VALUES ('prod', $1, 's', 'order.shipped', '{}', 'SUCCEEDED', $2, $2)`, [id, new Date(clock.getTime() - ago)])
  }
  const left = async (): Promise<string[]> => (await store.query<{ id: string }>('SELECT id FROM clocked_deliveries ORDER BY id')).rows.map(r => r.id)
  // One run deletes both or neither: it is over once the one past its retention is gone.
  while ((await left()).includes('past')) await new Promise((resolve) => setTimeout(resolve, 10))
  t.strictSame(await left(), ['kept'], 'the one that ended an hour ago by the clock stays')
})
