import t, { type Test } from 'tap'
import { databases } from '../support/databases.js'
import { SECRET, client, json } from './helper.js'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../config.js'
import { documents } from '../../routes/v1/documents.js'
import { quoteIdent } from '../../store/quote.js'

// A collection page is written by the summary schema's serializer: each item is the item
// route's representation, less the omitted fields, whatever else the stored row holds.

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const { config } = loadConfig({ LOG_LEVEL: 'silent', AUTH_JWT_SECRET: SECRET, DATA_DIR: 'memory' })
    const app = await buildApp(config, { store })
    t.teardown(() => app.close())
    const api = client(app)
    const author = json(await api.post('/v1/authors', { name: 'Ann', email: 'ann@example.com' }))
    const bodies = [
      { name: 'quoted "name" \\ with \u2028 and \ud83d\ude00', kind: 'INVOICE', description: null, tags: ['a', 'b"c'], metadata: { source: { system: 'portal', region: null } }, amount: '12.50', byteCount: '9007199254740993' },
      { name: 'second', kind: 'CONTRACT', description: 'x'.repeat(2000), pageCount: 3, metadata: null, effectiveDate: '2024-02-29', publishedDateTime: '2024-05-01T12:00:00.000Z' },
      { name: 'third', kind: 'PURCHASE_ORDER', retentionDuration: 'P1Y2M', validityInterval: 'R2/2024-05-01T00:00:00Z/P1D', reviewSchedule: '0 9 * * MON-FRI', discountPercentage: '100' }
    ]
    const created: Array<Record<string, unknown>> = []
    for (const b of bodies) {
      const res = await api.post('/v1/documents', { authorId: author.id, ...b })
      // Not the body as the message: a U+2028 in an assertion message ends tap's subtest silently.
      t.equal(res.statusCode, 201, 'created')
      created.push(json(res))
    }
    const items = async (t: Test): Promise<{ body: string, results: Array<Record<string, unknown>> }> => {
      const res = await api.get(`/v1/authors/${author.id as string}/documents?ordering=name`)
      t.equal(res.statusCode, 200, 'listed')
      t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
      return { body: res.body, results: json(res).results }
    }

    const summary = (entity: Record<string, unknown>): Record<string, unknown> => {
      const { pages, ...rest } = entity
      return rest
    }
    const byName = (a: Record<string, unknown>, b: Record<string, unknown>): number => (a.name as string) < (b.name as string) ? -1 : 1

    t.test('summaries as stored: the page holds each item route representation, less pages', async t => {
      const page = await items(t)
      t.strictSame(page.results, created.map(summary).sort(byName))
      // The schema's order (ref second), not the row's.
      t.strictSame(Object.keys(page.results[0] as object).slice(0, 2), ['id', 'ref'])
    })

    t.test('a stored document with a property its schema does not have: the page leaves it out', async t => {
      const id = (created[0] as Record<string, unknown>).id as string
      // As a document written before a schema change, or by another program, would be.
      await store.query(`UPDATE ${quoteIdent(documents.storage.table)} SET metadata = '{"source": {"system": "portal", "region": null, "legacy": "secret"}, "stray": 1}'::jsonb WHERE id = $1`, [id])
      const page = await items(t)
      t.notMatch(page.body, /legacy|secret|stray/)
      const first = page.results.find(r => r.id === id) as Record<string, unknown>
      t.strictSame(first.metadata, { source: { system: 'portal', region: null } })
      t.strictSame(page.results.map(r => r.id).sort(), created.map(c => c.id).sort(), 'every item still listed')
    })
  })
}
