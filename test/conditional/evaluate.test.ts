import t from 'tap'
import fc from 'fast-check'
import { evaluatePreconditions, parseEntityTags, strongMatch, weakMatch, type PreconditionRules, type PreconditionVerdict, type Preconditions } from '../../plugins/conditional/index.js'

const pre = (ifMatch: string | null, ifNoneMatch: string | null): Preconditions => ({
  ifMatch: ifMatch === null ? null : parseEntityTags(ifMatch),
  ifNoneMatch: ifNoneMatch === null ? null : parseEntityTags(ifNoneMatch)
})
const failed = (header: 'If-Match' | 'If-None-Match', exists: boolean): PreconditionVerdict => ({ kind: 'precondition-failed', header, exists })
const proceed: PreconditionVerdict = { kind: 'proceed' }

t.test('evaluatePreconditions: RFC 9110 §13.2.2 and Method rules 13, case by case', async t => {
  const table: Array<[string, Preconditions | null, string | null, PreconditionRules, PreconditionVerdict]> = [
    ['no headers', pre(null, null), '"a"', {}, proceed],
    ['conditional off', null, '"a"', {}, proceed],
    ['If-Match matches', pre('"a"', null), '"a"', {}, proceed],
    ['If-Match of a list', pre('"x", "a"', null), '"a"', {}, proceed],
    ['If-Match stale', pre('"b"', null), '"a"', {}, failed('If-Match', true)],
    ['If-Match weak never matches', pre('W/"a"', null), '"a"', {}, failed('If-Match', true)],
    ['If-Match * on an existing one', pre('*', null), '"a"', {}, proceed],
    ['If-Match on nothing', pre('"a"', null), null, {}, failed('If-Match', false)],
    ['If-Match * on nothing', pre('*', null), null, {}, failed('If-Match', false)],
    ['If-None-Match * on nothing', pre(null, '*'), null, {}, proceed],
    ['If-None-Match * on an existing one', pre(null, '*'), '"a"', {}, failed('If-None-Match', true)],
    ['If-None-Match weakly matching, a write', pre(null, 'W/"a"'), '"a"', {}, failed('If-None-Match', true)],
    ['If-None-Match matching, a read', pre(null, '"a"'), '"a"', { read: true }, { kind: 'not-modified' }],
    ['If-None-Match of another tag', pre(null, '"b"'), '"a"', { read: true }, proceed],
    ['If-Match first: both fail on a read', pre('"b"', '"a"'), '"a"', { read: true }, failed('If-Match', true)],
    ['both hold', pre('"a"', '"b"'), '"a"', {}, proceed],
    ['required and missing', pre(null, null), '"a"', { requireIfMatch: true }, { kind: 'precondition-required' }],
    ['required, conditional off', null, '"a"', { requireIfMatch: true }, { kind: 'precondition-required' }],
    ['required, but nothing exists to match', pre(null, null), null, { requireIfMatch: true }, proceed],
    ['required and sent', pre('"a"', null), '"a"', { requireIfMatch: true }, proceed],
    ['required and stale', pre('"b"', null), '"a"', { requireIfMatch: true }, failed('If-Match', true)]
  ]
  for (const [name, p, etag, rules, expected] of table) t.strictSame(evaluatePreconditions(p, etag, rules), expected, name)
})

t.test('If-Unmodified-Since: RFC 9110 §13.1.4, evaluated to the second, only without If-Match', async t => {
  const since = Date.UTC(2026, 0, 1, 12, 0, 0)
  const ius = (p: Preconditions, at: number | null = since): Preconditions => ({ ...p, ifUnmodifiedSince: at })
  const failedSince: PreconditionVerdict = { kind: 'precondition-failed', header: 'If-Unmodified-Since', exists: true }
  const table: Array<[string, Preconditions, string | null, PreconditionRules, string | Date | undefined, PreconditionVerdict]> = [
    ['changed before the date', ius(pre(null, null)), '"a"', {}, '2026-01-01T11:59:59.999Z', proceed],
    ['changed within the named second', ius(pre(null, null)), '"a"', {}, '2026-01-01T12:00:00.999Z', proceed],
    ['changed the second after', ius(pre(null, null)), '"a"', {}, '2026-01-01T12:00:01.000Z', failedSince],
    ['the date given as a Date', ius(pre(null, null)), '"a"', {}, new Date('2026-01-01T12:00:01Z'), failedSince],
    ['no modification date: ignored', ius(pre(null, null)), '"a"', {}, undefined, proceed],
    ['nothing exists: ignored', ius(pre(null, null)), null, {}, undefined, proceed],
    ['If-Match that holds: ignored', ius(pre('"a"', null)), '"a"', {}, '2027-01-01T00:00:00Z', proceed],
    ['If-Match that fails: named first', ius(pre('"b"', null)), '"a"', {}, '2027-01-01T00:00:00Z', failed('If-Match', true)],
    ['before If-None-Match', ius(pre(null, '"a"')), '"a"', {}, '2027-01-01T00:00:00Z', failedSince],
    ['then If-None-Match', ius(pre(null, '"a"')), '"a"', {}, '2025-01-01T00:00:00Z', failed('If-None-Match', true)],
    ['a read fails too', ius(pre(null, null)), '"a"', { read: true }, '2027-01-01T00:00:00Z', failedSince],
    ['If-Match required: 428, not 412', ius(pre(null, null)), '"a"', { requireIfMatch: true }, '2027-01-01T00:00:00Z', { kind: 'precondition-required' }],
    ['no date sent', ius(pre(null, null), null), '"a"', {}, '2027-01-01T00:00:00Z', proceed]
  ]
  for (const [name, p, etag, rules, modified, expected] of table) t.strictSame(evaluatePreconditions(p, etag, rules, modified), expected, name)
})

t.test('evaluatePreconditions agrees with the tag comparisons for any tags', async t => {
  const tag = fc.constantFrom('"a"', '"b"', 'W/"a"', 'W/"b"', '*')
  const header = fc.option(fc.array(tag, { minLength: 1, maxLength: 3 }).map(tags => tags.includes('*') ? '*' : tags.join(', ')), { nil: null })
  fc.assert(fc.property(header, header, fc.constantFrom('"a"', '"b"'), fc.boolean(), (im, inm, etag, read) => {
    const p = pre(im, inm)
    const verdict = evaluatePreconditions(p, etag, { read })
    const ifMatchFails = p.ifMatch !== null && !strongMatch(p.ifMatch, etag)
    const ifNoneMatchHits = p.ifNoneMatch !== null && weakMatch(p.ifNoneMatch, etag)
    if (ifMatchFails) return verdict.kind === 'precondition-failed' && verdict.header === 'If-Match'
    if (ifNoneMatchHits) return read ? verdict.kind === 'not-modified' : verdict.kind === 'precondition-failed' && verdict.header === 'If-None-Match'
    return verdict.kind === 'proceed'
  }))
  t.pass('held for every generated case')
})
