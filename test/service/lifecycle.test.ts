import t from 'tap'
import { databases } from '../support/databases.js'
import { leaksNothing, token, unique } from '../resource/helper.js'

const tokenWith = (scope: string): string => token('user-1', [scope])
import { serviceClient, startService } from './service.js'

// Black-box over real HTTP: the reference contract's "Documents: lifecycle, soft delete,
// pages" (actions, soft delete, the pages sub-collection), as a client sees them.

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const { base } = await startService(t, store)
    const { call, bodies } = serviceClient(base)
    const author = (await call('POST', '/v1/authors', { name: 'Lifecycle Author', email: 'life@example.com' })).body
    async function newDocument (extra: Record<string, unknown> = {}): Promise<any> {
      const res = await call('POST', '/v1/documents', { name: unique('life'), authorId: author.id, kind: 'CONTRACT', ...extra })
      t.equal(res.status, 201)
      return res.body
    }
    const etagOf = async (url: string): Promise<string> => (await call('GET', url)).headers.get('etag') as string

    t.test('actions: publish and archive move the status along its transitions, 200 with the entity and its ETag', async t => {
      const doc = await newDocument()
      const url = `/v1/documents/${doc.id as string}`
      const published = await call('POST', `${url}/publish`)
      t.equal(published.status, 200)
      t.match(published.body, { id: doc.id, status: 'PUBLISHED', modifiedBy: 'user-1' })
      t.ok(Date.parse(published.body.publishedDateTime) >= Date.parse(doc.createdDateTime), 'publishedDateTime set to now')
      t.equal(published.headers.get('etag'), published.body.etag)
      t.not(published.body.etag, doc.etag)
      t.strictSame((await call('GET', url)).body, published.body, 'as stored')

      const again = await call('POST', `${url}/publish`, {})
      t.equal(again.status, 409, 'publish from PUBLISHED')
      t.match(again.body, { title: 'Conflict', instance: url, context: [{ code: 'INVALID_STATE_TRANSITION', value: 'PUBLISHED' }] })
      t.match(again.body.detail, /PUBLISHED/)
      t.match(again.body.detail, /DRAFT/)

      const stale = await call('POST', `${url}/archive`, undefined, { 'if-match': doc.etag })
      t.equal(stale.status, 412, 'If-Match honoured when sent')
      const archived = await call('POST', `${url}/archive`, undefined, { 'if-match': published.body.etag })
      t.equal(archived.status, 200)
      t.equal(archived.body.status, 'ARCHIVED')
      t.equal((await call('POST', `${url}/archive`)).status, 409, 'archive from ARCHIVED')
      t.equal((await call('POST', `${url}/publish`)).status, 409, 'publish from ARCHIVED')

      const draft = await newDocument()
      t.equal((await call('POST', `/v1/documents/${draft.id as string}/archive`)).body.status, 'ARCHIVED', 'archive from DRAFT')

      const body = await call('POST', `${url}/publish`, { status: 'DRAFT' })
      t.equal(body.status, 400, 'a body other than none or {}')
      t.equal((await call('POST', '/v1/documents/nope/publish')).status, 404)
      const scopes = await call('POST', `${url}/archive`, undefined, { authorization: `Bearer ${tokenWith('documents:read')}` })
      t.equal(scopes.status, 403, 'actions need documents:write')
    })

    t.test('two concurrent publishes of one draft: one 200, one 409', async t => {
      for (let round = 0; round < 5; round++) {
        const doc = await newDocument()
        const answers = await Promise.all([1, 2].map(async () => await call('POST', `/v1/documents/${doc.id as string}/publish`)))
        t.strictSame(answers.map(a => a.status).sort(), [200, 409], `round ${round}`)
      }
    })

    t.test('soft delete: 204, GET still answers with the deletion, writes are 409, collections leave it out', async t => {
      const doc = await newDocument({ tags: ['soft'] })
      const url = `/v1/documents/${doc.id as string}`
      t.equal((await call('DELETE', url)).status, 428, 'If-Match required')
      const deleted = await call('DELETE', url, undefined, { 'if-match': doc.etag })
      t.equal(deleted.status, 204)
      const got = await call('GET', url)
      t.equal(got.status, 200, 'a deleted document is still there')
      t.match(got.body, { deletedBy: 'user-1', name: doc.name })
      t.ok(Date.parse(got.body.deletedDateTime) > 0)
      t.not(got.body.etag, doc.etag, 'its ETag changed')
      t.equal((await call('HEAD', url)).status, 200)
      const again = await call('DELETE', url, undefined, { 'if-match': got.body.etag })
      t.equal(again.status, 204, 'deleting it again')
      t.equal(await etagOf(url), got.body.etag, 'changes nothing')

      const etag = got.body.etag
      for (const [method, path, body] of [
        ['PUT', url, { name: doc.name, authorId: author.id, kind: 'CONTRACT' }],
        ['PATCH', url, { description: 'x' }],
        ['POST', `${url}/publish`, undefined],
        ['POST', `${url}/archive`, undefined],
        ['PUT', `${url}/pages`, { results: [] }]
      ] as const) {
        const res = await call(method, path, body, { 'if-match': etag })
        t.equal(res.status, 409, `${method} ${path.slice(url.length) || 'item'} on a deleted document`)
        t.match(res.body.detail, /restore/)
      }
      t.equal((await call('GET', `${url}/pages`)).status, 200, 'reads still answer')

      const listed = (await call('GET', '/v1/documents?tags=soft')).body.results.map((d: any) => d.id)
      t.notOk(listed.includes(doc.id), 'not in the collection')
      t.notOk((await call('POST', '/v1/documents/search', { tags: ['soft'] })).body.results.some((d: any) => d.id === doc.id), 'nor in search')
      t.notOk((await call('GET', `/v1/authors/${author.id as string}/documents?tags=soft`)).body.results.some((d: any) => d.id === doc.id), 'nor in the child collection')
      const asked = await call('GET', '/v1/documents?filter=deletedDateTime=isnull=false;tags==soft')
      t.strictSame(asked.body.results.map((d: any) => d.id), [doc.id], 'listed when the filter asks for deleted ones')
      t.equal(asked.body.results[0].deletedBy, 'user-1')
      const sorted = await call('GET', '/v1/documents?filter=tags==soft&ordering=-deletedDateTime')
      t.equal(sorted.status, 200, 'deletedDateTime is sortable')

      t.equal((await call('DELETE', `/v1/authors/${author.id as string}`)).status, 409, 'its author cannot be deleted: it has documents, deleted or not')
    })

    t.test('names are unique among documents not deleted; restore gives a taken name a 409', async t => {
      const doc = await newDocument()
      const url = `/v1/documents/${doc.id as string}`
      await call('DELETE', url, undefined, { 'if-match': doc.etag })
      const twin = await call('POST', '/v1/documents', { name: doc.name, authorId: author.id, kind: 'INVOICE' })
      t.equal(twin.status, 201, 'a deleted document\'s name can be taken again')
      const restore = await call('POST', `${url}/restore`)
      t.equal(restore.status, 409)
      t.match(restore.body, { context: [{ code: 'UNIQUE_NAME_VIOLATION', field: 'name', value: doc.name }] })
      // A restore has no body: neither the context item nor the detail points at one.
      t.notOk('source' in restore.body.context[0], 'no source: the name is the stored one, not one sent')
      t.equal(restore.body.detail, `Another document named '${doc.name as string}' exists; change or delete that one first, then retry.`)
      await call('PATCH', `/v1/documents/${twin.body.id as string}`, { name: unique('renamed') }, { 'if-match': twin.body.etag })
      const restored = await call('POST', `${url}/restore`)
      t.equal(restored.status, 200)
      t.match(restored.body, { id: doc.id, deletedDateTime: null, deletedBy: null, name: doc.name })
      t.equal(restored.headers.get('etag'), restored.body.etag)
      const notDeleted = await call('POST', `${url}/restore`)
      t.equal(notDeleted.status, 409, 'restore of a document not deleted')
      t.match(notDeleted.body.context, [{ code: 'INVALID_STATE_TRANSITION' }])
      t.ok((await call('GET', `/v1/documents?name=${encodeURIComponent(doc.name as string)}`)).body.results.some((d: any) => d.id === doc.id), 'listed again')
    })

    t.test('a bulk DELETE is the soft delete; a bulk UPDATE of a deleted document fails its operation', async t => {
      const doc = await newDocument()
      const url = `/v1/documents/${doc.id as string}`
      const del = await call('PATCH', '/v1/documents', { operations: [{ action: 'DELETE', ifMatch: doc.etag, entity: { id: doc.id } }] }, { 'content-type': 'application/json' })
      t.equal(del.body.status, 'SUCCEEDED')
      const got = (await call('GET', url)).body
      t.ok(got.deletedDateTime !== null, 'marked deleted')
      const update = await call('PATCH', '/v1/documents', { operations: [{ action: 'UPDATE', ifMatch: got.etag, entity: { id: doc.id, name: doc.name, authorId: author.id, kind: 'CONTRACT' } }] }, { 'content-type': 'application/json' })
      t.match(update.body, { status: 'FAILED', operations: [{ result: { status: 'FAILED', context: [{ code: 'ENTITY_DELETED' }] } }] })
    })

    t.test('pages: a number repeated is a 400 on every write of the document, not only PUT pages', async t => {
      const doc = await newDocument()
      const url = `/v1/documents/${doc.id as string}`
      const pages = [{ number: 1 }, { number: 2 }, { number: 1 }]
      const writes: Array<[string, string, unknown, Record<string, string>, string]> = [
        ['POST', '/v1/documents', { name: unique('dup'), authorId: author.id, kind: 'CONTRACT', pages }, {}, 'pages[2].number'],
        ['POST', `/v1/authors/${author.id as string}/documents`, { name: unique('dup'), kind: 'CONTRACT', pages }, {}, 'pages[2].number'],
        ['PUT', url, { name: doc.name, authorId: author.id, kind: 'CONTRACT', pages }, { 'if-match': doc.etag }, 'pages[2].number'],
        ['PATCH', url, { pages }, { 'if-match': doc.etag, 'content-type': 'application/merge-patch+json' }, 'pages[2].number'],
        ['PUT', `${url}/pages`, { results: pages }, { 'if-match': doc.etag }, 'results[2].number']
      ]
      for (const [method, path, body, headers, field] of writes) {
        const res = await call(method, path, body, headers)
        t.equal(res.status, 400, `${method} ${path}`)
        t.match(res.body, { detail: /number appears once/, context: [{ code: 'DUPLICATE_NUMBER', field, source: 'body', value: '1', message: `repeats the number of ${field.replace('[2]', '[0]').replace(/\.number$/, '')}; each number appears once` }] }, `${method} ${path}`)
      }
      for (const mode of ['ATOMIC', 'ISOLATED']) {
        const bulk = await call('PATCH', '/v1/documents', { transactionMode: mode, operations: [{ action: 'CREATE', entity: { name: unique('dup'), authorId: author.id, kind: 'CONTRACT', pages } }, { action: 'UPDATE', ifMatch: doc.etag, entity: { id: doc.id, name: doc.name, authorId: author.id, kind: 'CONTRACT', pages: [{ number: 3 }, { number: 3 }] } }] }, { 'content-type': 'application/json' })
        t.equal(bulk.status, 200, `bulk ${mode}`)
        t.strictSame(bulk.body.operations.map((r: any) => r.result.context?.map((c: any) => [c.code, c.field]) ?? null), [
          [['DUPLICATE_NUMBER', 'operations[0].entity.pages[2].number']],
          [['DUPLICATE_NUMBER', 'operations[1].entity.pages[1].number']]
        ], `bulk ${mode}: each operation fails on its own`)
      }
      t.strictSame((await call('GET', url)).body.etag, doc.etag, 'nothing was written')
      t.equal((await call('PATCH', url, { pages: [{ number: 2 }, { number: 1 }] }, { 'if-match': doc.etag, 'content-type': 'application/merge-patch+json' })).status, 204, 'numbers each once')
    })

    t.test('pages: PUT replaces the whole collection under If-Match; GET pages it by number', async t => {
      const doc = await newDocument()
      const url = `/v1/documents/${doc.id as string}`
      const pages = Array.from({ length: 25 }, (_, i) => ({ number: 25 - i, description: i % 2 === 0 ? `page ${25 - i}` : null, imageUrl: null }))
      t.equal((await call('PUT', `${url}/pages`, { results: pages })).status, 428, 'If-Match required')
      t.equal((await call('PUT', `${url}/pages`, { results: pages }, { 'if-match': '"stale"' })).status, 412)
      const repeated = await call('PUT', `${url}/pages`, { results: [{ number: 1 }, { number: 1 }] }, { 'if-match': doc.etag })
      t.equal(repeated.status, 400, 'a repeated number')
      t.match(repeated.body.context, [{ field: 'results[1].number', source: 'body' }])
      const put = await call('PUT', `${url}/pages`, { results: pages }, { 'if-match': doc.etag })
      t.equal(put.status, 204)
      t.equal(put.text, '')
      const after = (await call('GET', url)).body
      t.equal(put.headers.get('etag'), after.etag, 'the document\'s new ETag')
      t.not(after.etag, doc.etag)
      t.ok(Date.parse(after.modifiedDateTime) >= Date.parse(doc.modifiedDateTime))
      t.equal(after.pages.length, 25)

      const first = await call('GET', `${url}/pages`)
      t.equal(first.status, 200)
      t.strictSame(first.body.results.map((p: any) => p.number), Array.from({ length: 20 }, (_, i) => i + 1), 'ordered by number, 20 by default')
      t.strictSame(first.body.results[0], { number: 1, description: 'page 1', imageUrl: null })
      t.ok(first.headers.get('etag'), 'an ETag over the page')
      const next = await call('GET', first.body.paging.next.url.slice(base.length))
      t.strictSame(next.body.results.map((p: any) => p.number), [21, 22, 23, 24, 25])
      const prev = await call('GET', next.body.paging.previous.url.slice(base.length))
      t.strictSame(prev.body.results.map((p: any) => p.number), Array.from({ length: 20 }, (_, i) => i + 1))
      const desc = await call('GET', `${url}/pages?ordering=-number&limit=3`)
      t.strictSame(desc.body.results.map((p: any) => p.number), [25, 24, 23])
      const offset = await call('GET', `${url}/pages?offset=20&limit=10&totalCount=true`)
      t.match(offset.body.paging, { offset: 20, limit: 10, totalCount: 25 })
      t.equal((await call('GET', `${url}/pages?limit=1000`)).body.paging.limit, 100, 'at most 100')
      t.equal((await call('GET', `${url}/pages?ordering=description`)).status, 400, 'ordering on number only')
      t.equal((await call('GET', `${url}/pages`, undefined, { 'if-none-match': first.headers.get('etag') as string })).status, 304)

      t.equal((await call('GET', '/v1/documents/nope/pages')).status, 404)
      const unknown = await call('PUT', '/v1/documents/nope/pages', { results: [] }, { 'if-match': '"x"' })
      t.equal(unknown.status, 404, 'unknown document, also with If-Match')
      t.match(unknown.body.detail, 'nope')

      const emptied = await call('PUT', `${url}/pages`, { results: [] }, { 'if-match': after.etag })
      t.equal(emptied.status, 204)
      t.strictSame((await call('GET', `${url}/pages`)).body.results, [])
    })

    t.test('nothing of the store leaks in any answer', async t => {
      for (const body of bodies) t.ok(leaksNothing(body), body.slice(0, 200))
    })
  })
}
