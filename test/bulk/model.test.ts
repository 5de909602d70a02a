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

// A property over random bulks that mix CREATEs, UPDATEs (renaming or not) and DELETEs of
// documents, whose names collide (within the request and with stored documents, a deleted one
// freeing its name) and whose authors may not exist. A bulk may write each kind's operations
// in one statement, out of request order, where no order can change an outcome; whatever it
// does, the results and the stored names are those of applying the operations one after
// another (ISOLATED), or all or nothing, the first failure named (ATOMIC).

type MixedOp =
  | { action: 'CREATE', name: number, authorOk: boolean }
  | { action: 'UPDATE', doc: number, name: number, authorOk: boolean }
  | { action: 'DELETE', doc: number }

/**
 * The sequential model: a name is held by one document not deleted; a unique violation is found
 * before a missing reference. `stored[i]`: the name of stored document `i`.
 */
function mixedModel (stored: readonly number[], ops: readonly MixedOp[], atomic: boolean): { results: Expected[], names: number[] } {
  const docs = stored.map(name => ({ name, deleted: false }))
  const created: number[] = []
  const taken = (name: number, except: number | null): boolean =>
    created.includes(name) || docs.some((d, i) => i !== except && !d.deleted && d.name === name)
  const results: Expected[] = ops.map((op) => {
    if (op.action === 'DELETE') {
      (docs[op.doc] as { deleted: boolean }).deleted = true
      return { status: 'SUCCEEDED', code: null }
    }
    if (taken(op.name, op.action === 'UPDATE' ? op.doc : null)) return { status: 'FAILED', code: 'UNIQUE_NAME_VIOLATION' }
    if (!op.authorOk) return { status: 'FAILED', code: 'REFERENCE_NOT_FOUND' }
    if (op.action === 'CREATE') created.push(op.name)
    else (docs[op.doc] as { name: number }).name = op.name
    return { status: 'SUCCEEDED', code: null }
  })
  const names = (): number[] => [...docs.filter(d => !d.deleted).map(d => d.name), ...created].sort()
  if (!atomic) return { results, names: names() }
  const first = results.findIndex(r => r.status === 'FAILED')
  if (first === -1) return { results, names: names() }
  return { results: results.map((r, i) => i === first ? r : { status: 'FAILED', code: 'ROLLED_BACK' }), names: [...stored].sort() }
}

/** Stored documents, their names distinct, and operations naming each at most once. */
const mixedCases = fc.uniqueArray(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 4 }).chain(stored => fc.tuple(
  fc.constant(stored),
  fc.array(fc.oneof(
    fc.record({ action: fc.constant('CREATE' as const), name: fc.integer({ min: 0, max: 7 }), authorOk: fc.constantFrom(true, true, true, false) }),
    // Half the UPDATEs keep their document's name.
    fc.record({ action: fc.constant('UPDATE' as const), doc: fc.nat({ max: stored.length - 1 }), name: fc.integer({ min: 0, max: 7 }), keep: fc.boolean(), authorOk: fc.constantFrom(true, true, false) })
      .map(({ keep, ...op }) => keep ? { ...op, name: stored[op.doc] as number } : op),
    fc.record({ action: fc.constant('DELETE' as const), doc: fc.nat({ max: stored.length - 1 }) })
  ), { minLength: 1, maxLength: 10 }).map(ops => ops.filter((op, i) => op.action === 'CREATE' || !ops.slice(0, i).some(o => o.action !== 'CREATE' && o.doc === op.doc))),
  fc.boolean()
)).filter(([, ops]) => ops.length > 0)

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

    await t.resolves(fc.assert(fc.asyncProperty(mixedCases, async ([stored, ops, atomic]) => {
      const prefix = `x${++run}-`
      const docs: Json[] = []
      for (const n of stored) docs.push(await post('/v1/documents', { name: prefix + String(n), authorId: author.id, kind: 'INVOICE' }))
      const entity = (name: number, authorOk: boolean): Json => ({ name: prefix + String(name), authorId: authorOk ? author.id : 'nobody', kind: 'INVOICE' })
      const res = await bulk('documents', {
        transactionMode: atomic ? 'ATOMIC' : 'ISOLATED',
        operations: ops.map(op => {
          if (op.action === 'CREATE') return { action: 'CREATE', entity: entity(op.name, op.authorOk) }
          const doc = docs[op.doc] as Json
          if (op.action === 'DELETE') return { action: 'DELETE', ifMatch: doc.etag, entity: { id: doc.id } }
          return { action: 'UPDATE', ifMatch: doc.etag, entity: { id: doc.id, ...entity(op.name, op.authorOk) } }
        })
      })
      if (res.statusCode !== 200) return false
      const body = json(res)
      const expected = mixedModel(stored, ops, atomic)
      const got = (body.operations as Json[]).map(o => ({ status: o.result.status, code: o.result.context?.[0]?.code ?? null }))
      if (JSON.stringify(got) !== JSON.stringify(expected.results)) return false
      const { rows } = await store.query<{ name: string }>('SELECT name FROM documents WHERE ctx = $1 AND name LIKE $2 AND "deletedDateTime" IS NULL', ['prod', `${prefix}%`])
      return JSON.stringify(rows.map(r => Number(r.name.slice(prefix.length))).sort()) === JSON.stringify(expected.names)
    }), {
      numRuns: 100,
      examples: [
        // A rename frees a name that a later CREATE takes: not reordered.
        [[[5, 1, 6], [{ action: 'CREATE', name: 0, authorOk: true }, { action: 'UPDATE', doc: 0, name: 2, authorOk: true }, { action: 'CREATE', name: 5, authorOk: true }], false]],
        // The CREATEs go first, one of them failing; the UPDATE between them fails first in request order.
        [[[0, 1], [{ action: 'CREATE', name: 2, authorOk: true }, { action: 'UPDATE', doc: 1, name: 1, authorOk: false }, { action: 'CREATE', name: 0, authorOk: true }], true]]
      ]
    }))
  })
}
