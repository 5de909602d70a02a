import t from 'tap'
import { finishPage, sortKeyOf } from '../../store/finish-page.js'
import type { OrderingTerm, Paging } from '../../model/query.js'

const ordering: OrderingTerm[] = [{ field: 'n', direction: 'asc' }, { field: 'id', direction: 'asc' }]
const rows = (...ids: number[]): Array<{ id: string, n: number }> => ids.map((i) => ({ id: `i${i}`, n: i }))
const ids = (items: Array<{ id: string }>): string[] => items.map((item) => item.id)

t.test('sortKeyOf keeps the API types', async (t) => {
  const item = { a: 'x', b: 1, c: false, d: null, e: 10n, f: new Date('2024-01-01T00:00:00Z'), g: { h: 'deep' }, i: { j: 1 } }
  const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g.h', 'missing', 'i'].map((field) => ({ field, direction: 'asc' as const }))
  t.strictSame(sortKeyOf(item, keys), ['x', 1, false, null, '10', '2024-01-01T00:00:00.000Z', 'deep', null, null])
})

t.test('cursor paging, forwards', async (t) => {
  const first: Paging = { kind: 'cursor', limit: 2 }
  const page = finishPage(rows(1, 2, 3), first, ordering)
  t.strictSame(ids(page.items), ['i1', 'i2'])
  t.strictSame({ hasNext: page.hasNext, hasPrevious: page.hasPrevious }, { hasNext: true, hasPrevious: false })
  t.strictSame(page.next, { direction: 'next', values: [2, 'i2'] })
  t.equal(page.previous, null)

  const last = finishPage(rows(3), { kind: 'cursor', limit: 2, cursor: { direction: 'next', values: [2, 'i2'] } }, ordering)
  t.strictSame(ids(last.items), ['i3'])
  t.strictSame([last.next, last.previous], [null, { direction: 'previous', values: [3, 'i3'] }])
  t.strictSame({ hasNext: last.hasNext, hasPrevious: last.hasPrevious }, { hasNext: false, hasPrevious: true })

  const only = finishPage(rows(1, 2), first, ordering)
  t.strictSame([only.hasNext, only.hasPrevious, only.next, only.previous], [false, false, null, null], 'exactly one full page')
})

t.test('cursor paging, backwards: rows arrive reversed', async (t) => {
  const paging: Paging = { kind: 'cursor', limit: 2, cursor: { direction: 'previous', values: [4, 'i4'] } }
  const middle = finishPage(rows(3, 2, 1), paging, ordering)
  t.strictSame(ids(middle.items), ['i2', 'i3'])
  t.strictSame([middle.previous, middle.next], [{ direction: 'previous', values: [2, 'i2'] }, { direction: 'next', values: [3, 'i3'] }])
  const start = finishPage(rows(2, 1), paging, ordering)
  t.strictSame(ids(start.items), ['i1', 'i2'])
  t.strictSame([start.hasPrevious, start.hasNext], [false, true])
})

t.test('an empty page reached by a cursor links to the other side of its boundary, read from that end', async (t) => {
  const forwards = finishPage([], { kind: 'cursor', limit: 2, cursor: { direction: 'next', values: [1, 'i1'] } }, ordering)
  t.strictSame([forwards.items, forwards.hasNext, forwards.hasPrevious, forwards.next, forwards.previous], [[], false, true, null, { direction: 'previous', values: [] }], 'reached going forwards: the last items')
  const backwards = finishPage([], { kind: 'cursor', limit: 2, cursor: { direction: 'previous', values: [1, 'i1'] } }, ordering)
  t.strictSame([backwards.items, backwards.hasNext, backwards.hasPrevious, backwards.next, backwards.previous], [[], true, false, { direction: 'next', values: [] }, null], 'reached going backwards: the first items')
  for (const cursor of [undefined, { direction: 'next' as const, values: [] }, { direction: 'previous' as const, values: [] }]) {
    const none = finishPage([], { kind: 'cursor', limit: 2, ...(cursor === undefined ? {} : { cursor }) }, ordering)
    t.strictSame([none.hasNext, none.hasPrevious, none.next, none.previous], [false, false, null, null], `empty from an end (${JSON.stringify(cursor)}): no link`)
  }
})

t.test('a page read from an end has no link past it', async (t) => {
  const last = finishPage(rows(3, 2, 1), { kind: 'cursor', limit: 2, cursor: { direction: 'previous', values: [] } }, ordering)
  t.strictSame([last.items.map(r => r.id), last.next, last.previous], [['i2', 'i3'], null, { direction: 'previous', values: [2, 'i2'] }], 'the last items: no next, a previous')
  const first = finishPage(rows(1, 2, 3), { kind: 'cursor', limit: 2, cursor: { direction: 'next', values: [] } }, ordering)
  t.strictSame([first.items.map(r => r.id), first.next, first.previous], [['i1', 'i2'], { direction: 'next', values: [2, 'i2'] }, null], 'the first items: a next, no previous')
})

t.test('offset paging', async (t) => {
  const page = finishPage(rows(5, 6, 7), { kind: 'offset', limit: 2, offset: 4, totalCount: false }, ordering)
  t.strictSame(ids(page.items), ['i5', 'i6'])
  t.strictSame([page.hasNext, page.hasPrevious, page.next, page.previous], [true, true, null, null])
  const first = finishPage(rows(1), { kind: 'offset', limit: 2, offset: 0, totalCount: true }, ordering)
  t.strictSame([first.hasNext, first.hasPrevious], [false, false])
})
