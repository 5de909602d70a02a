import t from 'tap'
import fc from 'fast-check'
import { formatRef, isIdentifier, isRef, isRefEntity, isRefNamespace, parseRef } from '../../schemas/validators/ref.js'
import { ajvAccepts } from './helper.js'

const lower = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz')
const lowerAlnum = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789')
const idChar = fc.constantFrom(...'ABCXYZabcxyz0123456789._~-')
const parts = fc.record({
  namespace: fc.string({ unit: lower, minLength: 1, maxLength: 10 }),
  entity: fc.string({ unit: lowerAlnum, minLength: 1, maxLength: 20 }),
  subEntity: fc.string({ unit: lowerAlnum, minLength: 0, maxLength: 20 }),
  id: fc.string({ unit: idChar, minLength: 1, maxLength: 150 })
})
const write = (p: { namespace: string, entity: string, subEntity: string, id: string }): string => `${p.namespace}:${p.entity}:${p.subEntity}:${p.id}`

t.test('svc-ref: references built from valid parts are accepted and parse back', async t => {
  fc.assert(fc.property(parts, p => {
    const s = write(p)
    const parsed = parseRef(s)
    return isRef(s) && ajvAccepts('svc-ref', s) && parsed !== undefined &&
      parsed.namespace === p.namespace && parsed.entity === p.entity && parsed.subEntity === p.subEntity && parsed.id === p.id
  }))
  t.pass()
})

t.test('svc-ref: an upper-case letter, a part too long, a bad id character or a missing delimiter is refused', async t => {
  const upper = fc.constantFrom('A', 'Z')
  fc.assert(fc.property(parts, upper, (p, u) =>
    !isRef(write({ ...p, namespace: p.namespace.slice(1) + u })) &&
    !isRef(write({ ...p, entity: u + p.entity.slice(1) })) &&
    !isRef(write({ ...p, subEntity: p.subEntity + u }))))
  fc.assert(fc.property(parts, p =>
    !isRef(write({ ...p, namespace: p.namespace.padEnd(11, 'a') })) &&
    !isRef(write({ ...p, entity: p.entity.padEnd(21, '0') })) &&
    !isRef(write({ ...p, subEntity: p.subEntity.padEnd(21, 'x') }))))
  fc.assert(fc.property(parts, fc.constantFrom(':', '/', ' ', '@', '%', '+', 'é'), (p, c) => !isRef(write({ ...p, id: p.id + c }))))
  fc.assert(fc.property(parts, p => !isRef(`${p.namespace}:${p.entity}:${p.id}`) && !isRef(`${p.namespace}${p.entity}:${p.subEntity}:${p.id}`)))
  fc.assert(fc.property(parts, p => {
    const s = write(p)
    const long = s + 'x'.repeat(256 - s.length)
    return s.length <= 255 ? !isRef(long) && isRef(long.slice(0, 255)) : !isRef(s)
  }))  // at most 255 characters in all
  t.pass()
})

t.test('svc-ref: named edge cases', async t => {
  const prefix = 'svc:author::'
  const cases: Array<[string, boolean]> = [
    ['svc:author::123e4567-e89b-42d3-a456-426614174000', true],
    ['svc:author::a', true],
    ['svc:document:page:7', true],
    ['abcdefghij:a1:b2:X.y_z~-', true],
    [prefix + 'x'.repeat(255 - prefix.length), true],
    [prefix + 'x'.repeat(256 - prefix.length), false],
    ['svc:author::', false],
    ['svc:Author::1', false],
    ['SVC:author::1', false],
    ['svc:author:Page:1', false],
    ['urn:svc:author::1', false],
    ['svc1:author::1', false],
    ['abcdefghijk:author::1', false],
    [`svc:${'a'.repeat(21)}::1`, false],
    [`svc:${'a'.repeat(20)}::1`, true],
    [`svc:author:${'b'.repeat(21)}:1`, false],
    ['svc::x:1', false],
    [':author::1', false],
    ['svc:author::a:b', false],
    ['svc:author::a b', false],
    ['svc:author::a/b', false],
    ['svc:author', false],
    ['', false]
  ]
  for (const [value, valid] of cases) {
    t.equal(isRef(value), valid, JSON.stringify(value.length > 60 ? `${value.slice(0, 20)}… (${value.length})` : value))
    t.equal(ajvAccepts('svc-ref', value), valid, 'through Ajv')
  }
})

t.test('ref parts and formatRef', async t => {
  t.equal(formatRef('author', 'abc'), 'svc:author::abc')
  t.equal(formatRef('document', '7', { subEntity: 'page', namespace: 'acme' }), 'acme:document:page:7')
  t.strictSame(parseRef('svc:document:page:7'), { namespace: 'svc', entity: 'document', subEntity: 'page', id: '7' })
  t.equal(isRefNamespace(''), false)
  t.equal(isRefNamespace('abcdefghij'), true)
  t.equal(isRefEntity(''), false)
  t.equal(isRefEntity('', true), true)
  t.equal(isIdentifier(''), false)
  t.equal(isIdentifier('A.b_c~d-1'), true)
})
