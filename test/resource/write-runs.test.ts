import t from 'tap'
import fc from 'fast-check'
import { changeOf, runsInOrder, runsOf, touchesUnique, type Kind, type Step } from '../../plugins/resource/write/runs.js'
import type { WriteAction } from '../../plugins/resource/write/operations.js'

// Which statements a plan's steps are written by, and in what order (plugins/resource/write/runs.ts).

interface Spec { kind: Kind, action?: WriteAction, fields?: string[], unique?: boolean, attached?: boolean, transition?: string }

const ATTACHED = { sql: () => '', values: [] }

function steps (specs: readonly Spec[]): Step[] {
  return specs.map((s, i) => ({
    result: { op: { action: s.action ?? 'update', id: `e${i}`, values: {}, ifMatch: null, ifNoneMatch: null, ...s.transition === undefined ? {} : { transition: s.transition }, ...s.attached === true ? { attached: ATTACHED as never } : {} }, values: {}, row: null, failure: null, change: null },
    kind: s.kind,
    fields: s.fields,
    write: { id: `e${i}`, etag: '"t"', values: {} },
    unique: s.unique ?? false
  }))
}

/** Each run as the indexes of its steps in request order. */
function shape (made: { runs: Step[][] }, all: readonly Step[]): number[][] {
  return made.runs.map(run => run.map(s => all.indexOf(s)))
}

const C: Spec = { kind: 'insert', action: 'create' }
const U: Spec = { kind: 'update' }
const D: Spec = { kind: 'mark-deleted', action: 'delete' }

t.test('runsOf: a table of cases', async t => {
  const cases: Array<{ name: string, specs: Spec[], distinct?: boolean, selfReferencing?: boolean, runs: number[][], gathered: boolean }> = [
    { name: 'one kind: one run', specs: [C, C, C], runs: [[0, 1, 2]], gathered: false },
    { name: 'kinds alternating, none unique: one run each, in the order each kind first came', specs: [C, U, C, U, D, C], runs: [[0, 2, 5], [1, 3], [4]], gathered: true },
    { name: 'the update first', specs: [U, C, U, C], runs: [[0, 2], [1, 3]], gathered: true },
    { name: 'runs already together: nothing to gather', specs: [C, C, U, U], runs: [[0, 1], [2, 3]], gathered: false },
    { name: 'every unique step of one kind (the creates): gathered', specs: [{ ...C, unique: true }, U, { ...C, unique: true }], runs: [[0, 2], [1]], gathered: true },
    { name: 'a deletion frees a name a later create takes: request order', specs: [{ ...D, unique: true }, U, { ...C, unique: true }, U], runs: [[0], [1], [2], [3]], gathered: false },
    { name: 'a rename and a create: request order', specs: [{ ...C, unique: true }, { ...U, unique: true }, { ...C, unique: true }], runs: [[0], [1], [2]], gathered: false },
    { name: 'an entity named twice: request order', specs: [C, U, C], distinct: false, runs: [[0], [1], [2]], gathered: false },
    { name: 'a table referencing its own rows: request order', specs: [C, U, C], selfReferencing: true, runs: [[0], [1], [2]], gathered: false },
    { name: 'an attached write: request order', specs: [C, { ...U, attached: true }, C], runs: [[0], [1], [2]], gathered: false },
    { name: 'updates of other fields are other statements', specs: [{ ...U, fields: ['a'] }, { ...U, fields: ['b'] }, { ...U, fields: ['a'] }], runs: [[0, 2], [1]], gathered: true },
    { name: 'a transition is another event than an update', specs: [{ ...U, action: 'transition', transition: 'publish', fields: ['status'] }, U, { ...U, action: 'transition', transition: 'publish', fields: ['status'] }], runs: [[0, 2], [1]], gathered: true }
  ]
  for (const c of cases) {
    const all = steps(c.specs)
    const made = runsOf(all, c.distinct ?? true, c.selfReferencing ?? false)
    t.strictSame(shape(made, all), c.runs, c.name)
    t.equal(made.gathered, c.gathered, `${c.name}: gathered`)
  }
})

t.test('runsOf: every step once, each run one statement\'s, request order kept within runs and whenever it may matter', async t => {
  const spec = fc.record({
    kind: fc.constantFrom<Kind>('insert', 'update', 'mark-deleted', 'restore'),
    fields: fc.option(fc.constantFrom(['a'], ['b']).map(f => [...f]), { nil: undefined }),
    unique: fc.boolean(),
    attached: fc.nat({ max: 9 }).map(n => n === 0)
  })
  fc.assert(fc.property(fc.array(spec, { maxLength: 12 }), fc.boolean(), fc.boolean(), (specs, distinct, selfReferencing) => {
    const all = steps(specs)
    const made = runsOf(all, distinct, selfReferencing)
    const flat = made.runs.flat()
    // A partition of the steps.
    if (flat.length !== all.length || new Set(flat).size !== all.length) return false
    for (const run of made.runs) {
      const head = run[0] as Step
      if (!run.every(s => s.kind === head.kind && changeOf(s) === changeOf(head) && String(s.fields) === String(head.fields) && s.result.op.attached === head.result.op.attached)) return false
      // Request order within a run.
      if (!run.every((s, i) => i === 0 || all.indexOf(run[i - 1] as Step) < all.indexOf(s))) return false
    }
    if (!made.gathered) return JSON.stringify(shape(made, all)) === JSON.stringify(shape({ runs: runsInOrder(all) }, all))
    // Out of request order only when nothing can tell: distinct entities, no reference to the
    // table itself, no attached write, every unique step in one run.
    return distinct && !selfReferencing && all.every(s => s.result.op.attached === undefined) && made.runs.filter(run => run.some(s => s.unique)).length <= 1
  }))
})

t.test('touchesUnique', async t => {
  const unique = ['name']
  const writable = ['name', 'note']
  const row = { name: 'a', note: 'x' }
  const cases: Array<[string, Kind, string[] | undefined, Record<string, unknown>, Record<string, unknown> | undefined, readonly string[], boolean]> = [
    ['no unique field: never', 'insert', undefined, { name: 'a' }, undefined, [], false],
    ['a new row takes its values', 'insert', undefined, { name: 'a' }, undefined, unique, true],
    ['an upsert may', 'upsert', undefined, { name: 'a' }, row, unique, true],
    ['a deletion gives them up', 'mark-deleted', undefined, {}, row, unique, true],
    ['a removal too', 'delete', undefined, {}, row, unique, true],
    ['a restore takes them again', 'restore', undefined, row, row, unique, true],
    ['an update of every writable field, the unique one as it was', 'update', undefined, { name: 'a', note: 'y' }, row, unique, false],
    ['an update changing it', 'update', undefined, { name: 'b', note: 'x' }, row, unique, true],
    ['an update of other fields', 'update', ['note'], { note: 'y' }, row, unique, false],
    ['an update naming it, unchanged', 'update', ['name'], { name: 'a' }, row, unique, false],
    ['an update naming it, its row not read', 'update', ['name'], { name: 'a' }, undefined, unique, true],
    ['an update of other fields, its row not read', 'update', ['note'], { note: 'y' }, undefined, unique, false],
    ['a value set to null from a value', 'update', ['name'], { name: null }, row, unique, true],
    ['null as missing', 'update', ['name'], {}, { name: null }, unique, false],
    ['a structured value, equal', 'update', ['name'], { name: { a: [1] } }, { name: { a: [1] } }, unique, false]
  ]
  for (const [name, kind, fields, values, current, u, expected] of cases) t.equal(touchesUnique(kind, fields, values, current, u, writable), expected, name)
})

t.test('changeOf: the event a step is', async t => {
  const cases: Array<[Spec, string]> = [
    [{ kind: 'insert' }, 'created'], [{ kind: 'upsert' }, 'created'], [{ kind: 'update' }, 'updated'],
    [{ kind: 'delete' }, 'deleted'], [{ kind: 'mark-deleted' }, 'deleted'], [{ kind: 'restore' }, 'restored'],
    [{ kind: 'update', action: 'transition', transition: 'publish' }, 'published'], [{ kind: 'update', action: 'transition', transition: 'archive' }, 'archived']
  ]
  for (const [spec, event] of cases) t.equal(changeOf(steps([spec])[0] as Step), event, event)
})
