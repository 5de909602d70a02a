import t from 'tap'
import { randomUUID } from 'node:crypto'
import { databases } from '../support/databases.js'
import { client, receiver, startEvents } from './helper.js'
import { BACKGROUND, countStatements } from '../support/count-statements.js'

// Webhook subscriptions take requests as every other resource does. They honour
// Svc-Idempotency-Key (conventions: Svc-Idempotency-Key): a repeated POST is a 409 and creates
// nothing; a retried PATCH or DELETE answers as the first did, ETag included; a key reused for
// another request is a 409; a refused request keeps no key. And a query parameter on an item
// route or a write is refused, not ignored (Simple filtering 9: filters apply to collection GETs).

const key = (): string => `key-${randomUUID()}`

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const hook = await receiver(t)
    const { base } = await startEvents(t, store)
    const call = client(base)
    const path = '/v1/webhook-subscriptions'

    t.test('a repeated POST: 409 naming the first subscription, none created twice', async t => {
      const k = key()
      const body = { url: hook.url, events: ['author.created'], description: `keyed ${k}` }
      const first = await call('POST', path, body, { 'svc-idempotency-key': k })
      t.equal(first.status, 201)
      const again = await call('POST', path, body, { 'svc-idempotency-key': k })
      t.equal(again.status, 409)
      t.equal(again.body.instance, first.headers.get('location'))
      t.match(again.body.detail, /already used to create/)
      const listed = (await call('GET', `${path}?limit=100`)).body.results as Array<{ description: string }>
      t.equal(listed.filter(s => s.description === body.description).length, 1, 'one subscription')
      const other = await call('POST', `${path}`, { ...body, description: 'another' }, { 'svc-idempotency-key': k })
      t.equal(other.status, 409, 'another body with a used key')
    })

    t.test('a PATCH sets the fields it names and keeps the others, on its If-Match alone or on the subscription as read', async t => {
      const s = (await call('POST', path, { url: hook.url, events: ['author.created'], description: 'first' })).body
      const url = `${path}/${s.id as string}`
      let model: Record<string, unknown> = { url: s.url, events: s.events, description: 'first', active: true }
      let etag = s.etag as string
      // The condition sent with each change, from the current ETag: strong and '*' are decided
      // without a read; weak tags, If-None-Match and a URL alone are decided on a read.
      const conditions: Array<[string, (etag: string) => Record<string, string>]> = [
        ['If-Match', e => ({ 'if-match': e })],
        ['If-Match among others', e => ({ 'if-match': `"other", ${e}` })],
        ['If-Match: *', () => ({ 'if-match': '*' })],
        ['no condition', () => ({})],
        ['If-None-Match of another ETag', () => ({ 'if-none-match': '"other"' })]
      ]
      const changes: Array<Record<string, unknown>> = [
        { description: null },
        { active: false },
        { events: ['author.updated', 'author.deleted'] },
        { url: `${hook.url}/moved` },
        {},
        { description: 'again', active: true },
        { url: hook.url, events: ['author.created'] }
      ]
      for (const [name, condition] of conditions) {
        for (const change of changes) {
          const res = await call('PATCH', url, change, condition(etag))
          t.equal(res.status, 204, `${name}, ${JSON.stringify(change)}`)
          t.not(res.headers.get('etag'), etag, 'a new ETag')
          etag = res.headers.get('etag') as string
          model = { ...model, ...change }
          t.match((await call('GET', url)).body, { ...model, etag }, `${name}, ${JSON.stringify(change)}: the others kept`)
        }
      }
      // Switched back on, by either way of deciding: a new run of failures.
      const ways: Array<[string, (etag: string) => Record<string, string>]> = [['If-Match', e => ({ 'if-match': e })], ['If-None-Match, decided on a read', () => ({ 'if-none-match': '"other"' })]]
      for (const [name, condition] of ways) {
        t.equal((await call('PATCH', url, { active: false }, { 'if-match': etag })).status, 204)
        await store.query('UPDATE event_subscriptions SET consecutive_failures = 7 WHERE id = $1', [s.id])
        const current = (await call('GET', url)).body.etag as string
        const on = await call('PATCH', url, { active: true }, condition(current))
        t.equal(on.status, 204, name)
        etag = on.headers.get('etag') as string
        const { rows } = await store.query<{ failures: number }>('SELECT consecutive_failures AS failures FROM event_subscriptions WHERE id = $1', [s.id])
        t.equal(rows[0]?.failures, 0, `${name}: failures counted again from none`)
      }
      // Refused either way, nothing changed: a stale If-Match (412), If-None-Match of the
      // current ETag (412), an unknown id (404).
      const before = (await call('GET', url)).body
      t.equal((await call('PATCH', url, { description: 'stale' }, { 'if-match': '"stale"' })).status, 412)
      t.equal((await call('PATCH', url, { description: 'none' }, { 'if-none-match': before.etag })).status, 412)
      t.equal((await call('PATCH', `${path}/${randomUUID()}`, { description: 'unknown' }, { 'if-match': before.etag })).status, 404)
      t.strictSame((await call('GET', url)).body, before, 'nothing changed')
    })

    t.test('a retried PATCH answers its first ETag and applies once; another body is a 409', async t => {
      const s = (await call('POST', path, { url: hook.url, events: ['author.created'] })).body
      const url = `${path}/${s.id as string}`
      const k = key()
      const first = await call('PATCH', url, { description: 'one' }, { 'if-match': s.etag, 'svc-idempotency-key': k })
      t.equal(first.status, 204)
      const etag = first.headers.get('etag')
      t.not(etag, null)
      const later = await call('PATCH', url, { active: false }, { 'if-match': etag as string })
      t.equal(later.status, 204, 'changed since by another request')
      const retry = await call('PATCH', url, { description: 'one' }, { 'if-match': s.etag, 'svc-idempotency-key': k })
      t.equal(retry.status, 204, 'replayed although its If-Match is stale now')
      t.equal(retry.headers.get('etag'), etag, 'with the ETag its first answer gave')
      t.match((await call('GET', url)).body, { description: 'one', active: false, etag: later.headers.get('etag') }, 'not applied again')
      const reused = await call('PATCH', url, { description: 'two' }, { 'if-match': later.headers.get('etag') as string, 'svc-idempotency-key': k })
      t.equal(reused.status, 409, 'the key reused for another body')
      t.match(reused.body.detail, /with another body/)
      t.equal((await call('GET', url)).body.description, 'one')
      const deleting = await call('DELETE', url, undefined, { 'svc-idempotency-key': k })
      t.equal(deleting.status, 409, 'the key reused for a DELETE')
      t.match(deleting.body.detail, /already used for PATCH/)
      t.equal((await call('GET', url)).status, 200, 'not deleted')
    })

    t.test('a keyed PATCH decided on the subscription as read (its URL alone): applied once, and a retry answers its ETag', async t => {
      const s = (await call('POST', path, { url: hook.url, events: ['author.created'] })).body
      const url = `${path}/${s.id as string}`
      const k = key()
      const first = await call('PATCH', url, { url: `${hook.url}/moved` }, { 'if-match': s.etag, 'svc-idempotency-key': k })
      t.equal(first.status, 204)
      const retry = await call('PATCH', url, { url: `${hook.url}/moved` }, { 'if-match': s.etag, 'svc-idempotency-key': k })
      t.equal(retry.status, 204)
      t.equal(retry.headers.get('etag'), first.headers.get('etag'), 'the first answer\'s ETag')
      t.match((await call('GET', url)).body, { url: `${hook.url}/moved`, etag: first.headers.get('etag') }, 'applied once')
    })

    t.test('a keyed retry of a delivery: one statement, applied once; a refused one keeps no key', async t => {
      const s = (await call('POST', path, { url: hook.url, events: ['author.created'] })).body
      // Deliveries that never reach a dispatcher: the subscription is switched off.
      t.equal((await call('PATCH', `${path}/${s.id as string}`, { active: false })).status, 204)
      const delivery = async (status: string): Promise<string> => {
        const id = randomUUID()
        await store.query(`INSERT INTO event_deliveries (ctx, id, subscription_id, event_type, entity, status, next_attempt_at, created_at)
          VALUES ('prod', $1, $2, 'author.created', ARRAY['x'], $3, NULL, now())`, [id, s.id, status])
        return id
      }
      const retry = async (id: string, k: string): ReturnType<typeof call> => await call('POST', `${path}/${s.id as string}/deliveries/${id}/retry`, undefined, { 'svc-idempotency-key': k })
      const failed = await delivery('FAILED')
      const k = key()
      const sql = countStatements(store)
      t.teardown(() => { sql.restore() })
      const first = await retry(failed, k)
      t.equal(first.status, 200)
      t.match(first.body, { id: failed, status: 'PENDING' })
      t.strictSame(sql.texts().filter(text => !BACKGROUND.test(text)).length, 1, 'the retry and the key\'s claim: one statement')
      sql.restore()
      await store.query("UPDATE event_deliveries SET status = 'FAILED' WHERE id = $1", [failed])
      const again = await retry(failed, k)
      t.equal(again.status, 409, 'the key again: a POST is not run twice')
      t.match(again.body.detail, /already used/)
      t.equal((await store.query<{ status: string }>('SELECT status FROM event_deliveries WHERE id = $1', [failed])).rows[0]?.status, 'FAILED', 'not retried again')
      const succeeded = await delivery('SUCCEEDED')
      const k2 = key()
      const refused = await retry(succeeded, k2)
      t.equal(refused.status, 409)
      t.equal(refused.body.context[0].code, 'INVALID_STATE_TRANSITION')
      await store.query("UPDATE event_deliveries SET status = 'FAILED' WHERE id = $1", [succeeded])
      t.equal((await retry(succeeded, k2)).status, 200, 'the key of a refused retry applies later')
      t.equal((await retry(randomUUID(), key())).status, 404, 'none there: 404')
    })

    t.test('a refused PATCH keeps no key: the same key then applies', async t => {
      const s = (await call('POST', path, { url: hook.url, events: ['author.created'] })).body
      const url = `${path}/${s.id as string}`
      const k = key()
      t.equal((await call('PATCH', url, { description: 'x' }, { 'if-match': '"stale"', 'svc-idempotency-key': k })).status, 412)
      t.equal((await call('PATCH', `${path}/${randomUUID()}`, { description: 'x' }, { 'if-match': '*', 'svc-idempotency-key': k })).status, 404)
      const applied = await call('PATCH', url, { description: 'x' }, { 'if-match': s.etag, 'svc-idempotency-key': k })
      t.equal(applied.status, 204)
      t.equal((await call('GET', url)).body.description, 'x')
    })

    t.test('a retried DELETE answers 204 again; the key is the caller\'s own', async t => {
      const s = (await call('POST', path, { url: hook.url, events: ['author.created'] })).body
      const url = `${path}/${s.id as string}`
      const k = key()
      t.equal((await call('DELETE', url, undefined, { 'svc-idempotency-key': k })).status, 204)
      const again = await call('DELETE', url, undefined, { 'svc-idempotency-key': k })
      t.equal(again.status, 204)
      t.equal(again.headers.get('etag'), null)
      t.equal((await call('GET', url)).status, 404)
      const theirs = client(base, undefined, 'user-2')
      const created = await theirs('POST', path, { url: hook.url, events: ['author.created'] }, { 'svc-idempotency-key': k })
      t.equal(created.status, 201, 'another caller\'s same key is a new request')
    })

    t.test('a keyed DELETE with If-None-Match of another ETag (decided on it alone): deleted, and a retry answers 204', async t => {
      const s = (await call('POST', path, { url: hook.url, events: ['author.created'] })).body
      const url = `${path}/${s.id as string}`
      const k = key()
      t.equal((await call('DELETE', url, undefined, { 'if-none-match': '"other"', 'svc-idempotency-key': k })).status, 204)
      t.equal((await call('GET', url)).status, 404, 'deleted')
      t.equal((await call('DELETE', url, undefined, { 'if-none-match': '"other"', 'svc-idempotency-key': k })).status, 204, 'the retry')
    })

    t.test('a GET or HEAD of a subscription honours If-Match as an author\'s does (412), and If-None-Match (304); the document says so', async t => {
      const s = (await call('POST', path, { url: hook.url, events: ['author.created'] })).body
      const url = `${path}/${s.id as string}`
      const etag = s.etag as string
      const cases: Array<[string, string, Record<string, string>, number]> = [
        ['a stale If-Match', 'GET', { 'if-match': '"stale"' }, 412],
        ['a stale If-Match, HEAD', 'HEAD', { 'if-match': '"stale"' }, 412],
        ['a weak If-Match: compared strongly', 'GET', { 'if-match': `W/${etag}` }, 412],
        ['the current If-Match', 'GET', { 'if-match': etag }, 200],
        ['If-Match *', 'GET', { 'if-match': '*' }, 200],
        ['a stale If-Match before a matching If-None-Match', 'GET', { 'if-match': '"stale"', 'if-none-match': etag }, 412],
        ['a matching If-None-Match', 'GET', { 'if-none-match': etag }, 304],
        ['a matching weak If-None-Match, HEAD', 'HEAD', { 'if-none-match': `W/${etag}` }, 304],
        ['another If-None-Match', 'GET', { 'if-none-match': '"other"' }, 200]
      ]
      for (const [name, method, headers, status] of cases) {
        const res = await call(method, url, undefined, headers)
        t.equal(res.status, status, name)
        t.equal(res.headers.get('etag'), etag, `${name}: the ETag`)
        if (status === 412 && method === 'GET') t.match(res.body, { status: 412, instance: url, detail: `If-Match does not match the current ETag of ${url}; GET it again and retry with its ETag.` }, name)
        if (status === 304) t.equal(res.text, '', `${name}: no body`)
      }
      const document = (await call('GET', '/openapi.json')).body as { paths: Record<string, { get: { responses: Record<string, unknown>, parameters: Array<{ $ref?: string }> } }> }
      const get = document.paths[`${path}/{subscriptionId}`]?.get
      t.ok(get?.responses['304'], 'the document lists the 304')
      t.ok(get?.responses['412'], 'and the 412')
      t.strictSame((get?.parameters ?? []).map(p => p.$ref).filter(r => r !== undefined && /If(None)?Match/.test(r)).sort(), ['#/components/parameters/IfMatch', '#/components/parameters/IfNoneMatch'], 'and both headers')
    })

    t.test('a query parameter on an item route or a write is a 400 naming it; nothing is done', async t => {
      const s = (await call('POST', path, { url: hook.url, events: ['author.created'], description: 'kept' })).body
      const item = `${path}/${s.id as string}`
      const cases: Array<[string, string, unknown, Record<string, string>]> = [
        ['POST', `${path}?active=true`, { url: hook.url, events: ['author.created'], description: 'not made' }, {}],
        ['GET', `${item}?fields=url`, undefined, {}],
        ['PATCH', `${item}?active=false`, { description: 'changed' }, { 'if-match': s.etag }],
        ['DELETE', `${item}?active=false`, undefined, {}],
        ['POST', `${item}/deliveries/00000000-0000-4000-8000-000000000000/retry?now=1`, undefined, {}]
      ]
      for (const [method, url, body, headers] of cases) {
        const res = await call(method, url, body, headers)
        t.equal(res.status, 400, `${method} ${url}`)
        const parameter = new URL(url, base).searchParams.keys().next().value
        t.strictSame(res.body.context.map((c: { field: string, source: string }) => [c.field, c.source]), [[parameter, 'query']], `${method} ${url}: names the parameter`)
      }
      const still = await call('GET', item)
      t.equal(still.status, 200, 'nothing was deleted')
      t.match(still.body, { description: 'kept', active: true, etag: s.etag }, 'nor changed')
      const listed = (await call('GET', `${path}?limit=100`)).body.results as Array<{ description: string }>
      t.equal(listed.filter(x => x.description === 'not made').length, 0, 'nor created')
    })
  })
}
