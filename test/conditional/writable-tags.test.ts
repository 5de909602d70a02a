import t from 'tap'
import fc from 'fast-check'
import { evaluatePreconditions, writableTags, type EntityTag, type EntityTagList, type Preconditions } from '../../plugins/conditional/index.js'

// A write decided without reading the entity (a resource's, a webhook subscription's) checks
// writableTags' condition on the row in its statement; a write decided on the row as read asks
// evaluatePreconditions. Two implementations of one rule: on every existing ETag they must go
// on together.

const TAGS = ['"a"', '"b"', '"c"']
const tagList = fc.array(fc.record({ weak: fc.boolean(), tag: fc.constantFrom(...TAGS, '"z"') }), { minLength: 1, maxLength: 3 })
const condition: fc.Arbitrary<EntityTagList | null> = fc.oneof(fc.constant(null), fc.constant('*' as const), tagList as fc.Arbitrary<EntityTag[]>)

/** Whether the statement's condition holds on a row of `etag`. */
function holds (pre: Preconditions, etag: string): boolean {
  const tags = writableTags(pre)
  if (tags === null) return false
  return (tags.allowed === null || tags.allowed.includes(etag)) && (tags.refused === null || !tags.refused.includes(etag))
}

t.test('the condition holds on an existing ETag exactly when evaluatePreconditions goes on', async t => {
  fc.assert(fc.property(condition, condition, fc.constantFrom(...TAGS), (ifMatch, ifNoneMatch, etag) => {
    const pre = { ifMatch, ifNoneMatch }
    return holds(pre, etag) === (evaluatePreconditions(pre, etag).kind === 'proceed')
  }))
  t.pass('checked')
})

t.test('with If-Unmodified-Since: decided on the row when it counts, and the same answers when it does not', async t => {
  const since = Date.UTC(2026, 0, 1)
  const date = fc.option(fc.integer({ min: since - 5000, max: since + 5000 }), { nil: null })
  fc.assert(fc.property(condition, condition, date, fc.constantFrom(...TAGS), fc.integer({ min: since - 5000, max: since + 5000 }), (ifMatch, ifNoneMatch, ifUnmodifiedSince, etag, modified) => {
    const pre = { ifMatch, ifNoneMatch, ifUnmodifiedSince }
    const proceeds = evaluatePreconditions(pre, etag, {}, new Date(modified)).kind === 'proceed'
    // Only the row knows its modification date: no tags then, so that the write reads it first.
    if (ifMatch === null && ifUnmodifiedSince !== null) return writableTags(pre) === null
    return holds(pre, etag) === proceeds
  }))
  t.pass('checked')
})

t.test('cases by hand', async t => {
  const tag = (value: string, weak = false): EntityTag => ({ tag: value, weak })
  const cases: Array<[string, Preconditions | null, ReturnType<typeof writableTags>]> = [
    ['no preconditions (no conditional plugin)', null, { allowed: null, refused: null }],
    ['none sent', { ifMatch: null, ifNoneMatch: null }, { allowed: null, refused: null }],
    ['If-Match: *', { ifMatch: '*', ifNoneMatch: null }, { allowed: null, refused: null }],
    ['If-Match, strong and weak: the strong ones', { ifMatch: [tag('"a"'), tag('"b"', true)], ifNoneMatch: null }, { allowed: ['"a"'], refused: null }],
    ['If-Match, weak only: none matches', { ifMatch: [tag('"a"', true)], ifNoneMatch: null }, null],
    ['If-None-Match: *: only a creation', { ifMatch: null, ifNoneMatch: '*' }, null],
    ['If-None-Match, weak or strong: each refused', { ifMatch: null, ifNoneMatch: [tag('"a"', true), tag('"b"')] }, { allowed: null, refused: ['"a"', '"b"'] }],
    ['both', { ifMatch: [tag('"a"')], ifNoneMatch: [tag('"b"')] }, { allowed: ['"a"'], refused: ['"b"'] }],
    ['If-Unmodified-Since alone: the row is read', { ifMatch: null, ifNoneMatch: null, ifUnmodifiedSince: 0 }, null],
    ['If-Unmodified-Since with If-Match: ignored', { ifMatch: [tag('"a"')], ifNoneMatch: null, ifUnmodifiedSince: 0 }, { allowed: ['"a"'], refused: null }]
  ]
  for (const [name, pre, expected] of cases) t.strictSame(writableTags(pre), expected, name)
})
