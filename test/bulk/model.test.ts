import t from 'tap'
import fc from 'fast-check'
import { databases } from '../support/databases.js'
import { api, build, json, type Json } from './helper.js'

// A property over random bulks of document CREATEs whose names collide (within the request
// and with stored documents) and whose authors may not exist: whatever the batch and its
// one-by-one fallback do, the results and the stored rows are those of applying the
// operations one after another (ISOLATED), or of all-or-nothing (ATOMIC).

interface Op { name: number, authorOk: boolean }

interface Expected { status: 'SUCCEEDED' | 'FAILED', code: string | null }

/** The sequential model: a name is taken once; a unique violation is found before a missing reference. */
function model (stored: ReadonlySet<number>, ops: readonly Op[], atomic: boolean): { results: Expected[], names: Set<number> } {
  const names = new Set(stored)
  const results: Expected[] = ops.map((op) => {
    if (names.has(op.name)) return { status: 'FAILED', code: 'UNIQUE_NAME_VIOLATION' }
    if (!op.authorOk) return { status: 'FAILED', code: 'REFERENCE_NOT_FOUND' }
    names.add(op.name)
    return { status: 'SUCCEEDED', code: null }
  })
  if (!atomic) return { results, names }
  const first = results.findIndex(r => r.status === 'FAILED')
  if (first === -1) return { results, names }
  return { results: results.map((r, i) => i === first ? r : { status: 'FAILED', code: 'ROLLED_BACK' }), names: new Set(stored) }
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const app = await build(t, store)
    const { bulk, post } = api(app)
    const author = await post('/v1/authors', { name: 'Ann', email: 'ann@example.com' })
    let run = 0

    await t.resolves(fc.assert(fc.asyncProperty(
      fc.subarray([0, 1, 2, 3, 4, 5]),
      fc.array(fc.record({ name: fc.integer({ min: 0, max: 5 }), authorOk: fc.constantFrom(true, true, true, false) }), { minLength: 1, maxLength: 10 }),
      fc.boolean(),
      async (stored, ops, atomic) => {
        const prefix = `m${++run}-`
        for (const n of stored) await post('/v1/documents', { name: prefix + String(n), authorId: author.id, kind: 'INVOICE' })
        const res = await bulk('documents', {
          transactionMode: atomic ? 'ATOMIC' : 'ISOLATED',
          operations: ops.map(op => ({ action: 'CREATE', entity: { name: prefix + String(op.name), authorId: op.authorOk ? author.id : 'nobody', kind: 'INVOICE' } }))
        })
        if (res.statusCode !== 200) return false
        const body = json(res)
        const expected = model(new Set(stored), ops, atomic)
        const got = (body.operations as Json[]).map(o => ({ status: o.result.status, code: o.result.context?.[0]?.code ?? null }))
        if (JSON.stringify(got) !== JSON.stringify(expected.results)) return false
        const ok = expected.results.filter(r => r.status === 'SUCCEEDED').length
        if (body.status !== (ok === ops.length ? 'SUCCEEDED' : ok === 0 ? 'FAILED' : 'PARTIAL')) return false
        const { rows } = await store.query<{ name: string }>('SELECT name FROM documents WHERE ctx = $1 AND name LIKE $2', ['prod', `${prefix}%`])
        const names = rows.map(r => Number(r.name.slice(prefix.length))).sort()
        return JSON.stringify(names) === JSON.stringify([...expected.names].sort())
      }
    ), { numRuns: 40 }))
  })
}
