import t from 'tap'
import fc from 'fast-check'
import { Type } from '@sinclair/typebox'
import { lintSchema } from '../../plugins/lint/schema.js'
import { checkMediaType } from '../../plugins/lint/media-types.js'
import { schemaCases } from './fixtures/schemas.js'

t.test('schema rules: one passing and one failing case each', async t => {
  for (const c of schemaCases) {
    const violations = lintSchema(c.schema)
    if (c.rule === null) {
      t.strictSame(violations, [], `${c.name} passes`)
    } else {
      t.ok(violations.some(v => v.rule === c.rule && (c.path === undefined || v.path === c.path)), `${c.name} breaks ${c.rule}`, { violations })
    }
  }
})

t.test('paths are JSON pointers under the given root, and messages name the property', async t => {
  const violations = lintSchema(Type.Object({ 'a/b': Type.Object({ documentID: Type.String({ maxLength: 5 }) }) }), { path: '#/body' })
  t.strictSame(violations.map(v => v.path), ['#/body/properties/a~1b', '#/body/properties/a~1b/properties/documentID', '#/body/properties/a~1b/properties/documentID'])
  t.match(violations[1]?.message, /"documentID"/)
  t.strictSame(violations.map(v => v.rule), ['property-camel-case', 'property-camel-case', 'identifier-name'])
})

t.test('rules can be switched off', async t => {
  const schema = { type: 'object', properties: { isOn: { type: 'boolean' }, note: { type: 'string' } } }
  t.strictSame(lintSchema(schema).map(v => v.rule), ['boolean-prefix', 'string-max-length'])
  t.strictSame(lintSchema(schema, { rules: { 'boolean-prefix': false, 'string-max-length': true } }).map(v => v.rule), ['string-max-length'])
})

t.test('a parameter named ordering may enumerate field names', async t => {
  const schema = { type: 'array', items: { type: 'string', enum: ['name', '-name'] } }
  t.strictSame(lintSchema(schema, { name: 'ordering' }), [])
  t.strictSame(lintSchema(schema, { name: 'sort' }).map(v => v.rule), ['enum-upper-snake'])
  // The query plugin's sort key as a component of its own: its title says what its values are.
  t.strictSame(lintSchema({ title: 'SortKey', type: 'string', enum: ['name', '-name'] }), [])
  t.strictSame(lintSchema({ title: 'SortOrder', type: 'string', enum: ['name', '-name'] }).map(v => v.rule), ['enum-upper-snake'])
})

t.test('response roots', async t => {
  const paging = { type: 'object' }
  const results = { type: 'array', items: { type: 'object' } }
  const cases: Array<[string, unknown, string[]]> = [
    ['an object', { type: 'object' }, []],
    ['a bare array', { type: 'array', items: { type: 'object' } }, ['response-root-array']],
    ['an envelope', { type: 'object', required: ['results', 'paging'], properties: { results, paging } }, []],
    ['results without paging', { type: 'object', required: ['results'], properties: { results } }, ['collection-envelope']],
    ['optional results', { type: 'object', required: ['paging'], properties: { results, paging } }, ['collection-envelope']],
    ['paging by reference', { type: 'object', required: ['results', 'paging'], properties: { results, paging: { anyOf: [{ $ref: '#/components/schemas/CursorPaging' }] } } }, []],
    ['paging not a schema', { type: 'object', required: ['results', 'paging'], properties: { results, paging: true } }, ['collection-envelope']],
    ['results not an array', { type: 'object', required: ['results', 'paging'], properties: { results: { type: 'object' }, paging } }, ['collection-envelope']],
    ['no required list', { type: 'object', properties: { results, paging } }, ['collection-envelope', 'collection-envelope']]
  ]
  for (const [name, schema, rules] of cases) t.strictSame(lintSchema(schema, { root: 'response' }).map(v => v.rule), rules, name)
  t.strictSame(lintSchema({ type: 'array', items: { type: 'object' } }), [], 'a bare array is fine outside a response root')
  t.strictSame(lintSchema(true, { root: 'response' }), [], 'a boolean schema has nothing to lint')
})

t.test('TypeBox schemas, tuples and not', async t => {
  t.strictSame(lintSchema(Type.Object({ id: Type.String({ maxLength: 10 }), active: Type.Boolean(), tags: Type.Array(Type.String({ maxLength: 5 })) })), [])
  t.strictSame(lintSchema({ type: 'array', prefixItems: [{ type: 'string' }], not: { type: 'number' } }).map(v => v.path), ['#/not', '#/prefixItems/0'])
})

const word = fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/)
// Two letters at least: a one-letter word would put two capitals side by side.
const capitalized = fc.stringMatching(/^[a-z][a-z0-9]{1,7}$/).map(w => w[0]?.toUpperCase() + w.slice(1))

t.test('property: camelCase names with camel-cased acronyms pass the name rule', async t => {
  fc.assert(fc.property(word, fc.array(capitalized, { maxLength: 3 }), (head, tail) => {
    const name = head + tail.join('')
    return !lintSchema({ properties: { [name]: { type: 'string', maxLength: 1 } } }).some(v => v.rule === 'property-camel-case')
  }))
  t.pass('checked')
})

t.test('property: an upper-case acronym inside a name is flagged', async t => {
  fc.assert(fc.property(word, fc.stringMatching(/^[A-Z]{2,4}$/), (head, acronym) => {
    return lintSchema({ properties: { [head + acronym]: { type: 'string', maxLength: 1 } } }).some(v => v.rule === 'property-camel-case')
  }))
  t.pass('checked')
})

t.test('media types', async t => {
  const cases: Array<[string, boolean]> = [
    ['application/json', true],
    ['application/problem+json', true],
    ['text/csv; charset=UTF-8', true],
    ['application/x-www-form-urlencoded', true],
    ['application/vnd.svc-report+json', true],
    ['application/vnd.svc-sales-report.v2+xml', true],
    ['application/vnd.acme-report+json', false],
    ['application/vnd.svc-report+yaml', false],
    ['application/vnd.svc-report.2+json', false],
    ['text/vnd.svc-report+json', false],
    ['application/x-report', false],
    ['application/prs.report+json', false]
  ]
  for (const [type, ok] of cases) t.equal(checkMediaType(type) === null, ok, type)
  t.match(checkMediaType('application/vnd.acme+json'), /application\/vnd\.svc-<name>/)
})

t.test('nesting: at most three levels of nested objects in a response, and in filter and ordering paths', async t => {
  const obj = (inner?: unknown): Record<string, unknown> => ({ type: 'object', properties: inner === undefined ? {} : { inner } })
  const three = obj(obj(obj()))
  const four = obj(obj(obj(obj())))
  const nesting = (schema: unknown, opts: Parameters<typeof lintSchema>[1] = { root: 'response' }): string[] =>
    lintSchema(schema, opts).filter(v => v.rule === 'nesting-depth').map(v => v.path)
  const cases: Array<[string, unknown, string[]]> = [
    ['three levels', three, []],
    ['four levels', four, ['#']],
    ['arrays add no level', obj({ type: 'array', items: obj(obj()) }), []],
    ['a branch of anyOf counts', obj({ anyOf: [{ type: 'null' }, obj(obj())] }), ['#']],
    ['additionalProperties counts', obj({ type: 'object', additionalProperties: obj(obj()) }), ['#']],
    ['a collection counts its items from their root', { type: 'object', properties: { results: { type: 'array', items: three }, paging: { type: 'object' } } }, []],
    ['a collection item too deep', { type: 'object', properties: { results: { type: 'array', items: four }, paging: { type: 'object' } } }, ['#/properties/results/items']],
    ['a bulk response counts its operations from their root', { type: 'object', properties: { operations: { type: 'array', items: three }, status: { type: 'string' } } }, []],
    ['results without paging is no envelope', { type: 'object', properties: { results: { type: 'array', items: three } } }, ['#']]
  ]
  for (const [name, schema, paths] of cases) t.strictSame(nesting(schema), paths, name)
  t.strictSame(nesting(four, {}), [], 'only responses are measured')
  t.match(lintSchema(four, { root: 'response' }).find(v => v.rule === 'nesting-depth')?.message, /at most 3 levels of nested objects, and this one has 4/)
  t.strictSame(nesting({ type: 'string', maxLength: 5 }, { name: 'a.b.c' }), [], 'a path of three levels')
  t.strictSame(nesting({ type: 'string', maxLength: 5 }, { name: 'a.b.c.d', path: '#/query' }), ['#/query'], 'a filter path of four')
  t.strictSame(nesting({ type: 'array', items: { type: 'string', enum: ['a.b', '-a.b.c.d'] } }, { name: 'ordering' }), ['#'], 'an ordering value of four')
  t.strictSame(nesting({ type: 'string', enum: ['-a.b.c'] }, { name: 'ordering' }), [], 'an ordering value of three')
})
