import t from 'tap'
import type { ErrorObject } from 'ajv'
import { contextFromAjv, fieldFromPointer } from '../../plugins/problem/validation-context.js'

function err (keyword: string, params: Record<string, unknown>, data: unknown, instancePath = '/x', schemaPath = `#/properties/x/${keyword}`): ErrorObject {
  return { keyword, params, data, instancePath, schemaPath, message: `ajv says ${keyword}` } as ErrorObject
}

t.test('keyword → code, message and value', async t => {
  const rows: Array<[ErrorObject, string, RegExp, string | undefined]> = [
    [err('required', { missingProperty: 'name' }, {}, ''), 'INPUT_NULL', /required/, undefined],
    [err('type', { type: 'string' }, null), 'INPUT_NULL', /null/, undefined],
    [err('type', { type: 'integer,null' }, 'x'), 'INPUT_INVALID', /integer or null/, 'x'],
    [err('minLength', { limit: 1 }, '  '), 'INPUT_BLANK', /blank/, '  '],
    [err('minLength', { limit: 3 }, 'ab'), 'INPUT_MIN_VALUE', /at least 3 characters/, 'ab'],
    [err('maxLength', { limit: 3 }, 'abcd'), 'INPUT_MAX_VALUE', /at most 3 characters/, undefined],
    [err('minItems', { limit: 1 }, []), 'INPUT_EMPTY', /empty/, undefined],
    [err('minItems', { limit: 3 }, [1]), 'INPUT_MIN_VALUE', /at least 3 items/, undefined],
    [err('maxItems', { limit: 1 }, [1, 2]), 'INPUT_MAX_VALUE', /at most 1 items/, undefined],
    [err('minimum', { limit: 1 }, 0), 'INPUT_MIN_VALUE', /at least 1/, '0'],
    [err('exclusiveMinimum', { limit: 1 }, 1), 'INPUT_MIN_VALUE', /greater than 1/, '1'],
    [err('maximum', { limit: 9 }, 10), 'INPUT_MAX_VALUE', /at most 9/, '10'],
    [err('exclusiveMaximum', { limit: 9 }, 9), 'INPUT_MAX_VALUE', /less than 9/, '9'],
    [err('decimalMinimum', { limit: '0' }, '-1'), 'INPUT_MIN_VALUE', /at least 0/, '-1'],
    [err('decimalMaximum', { limit: '100' }, '100.5'), 'INPUT_MAX_VALUE', /at most 100/, '100.5'],
    [err('minProperties', { limit: 1 }, {}), 'INPUT_EMPTY', /at least 1 properties/, undefined],
    [err('maxProperties', { limit: 1 }, { a: 1, b: 2 }), 'INPUT_MAX_VALUE', /at most 1 properties/, undefined],
    [err('additionalProperties', { additionalProperty: 'color' }, {}, ''), 'INPUT_INVALID', /not allowed/, undefined],
    [err('format', { format: 'email' }, 'nope'), 'INPUT_INVALID', /email/, 'nope'],
    [err('pattern', { pattern: '^a$' }, 'b'), 'INPUT_INVALID', /pattern \^a\$/, 'b'],
    [err('enum', { allowedValues: ['A', 'B'] }, 'C'), 'INPUT_INVALID', /one of A, B/, 'C'],
    [err('const', { allowedValue: 'A' }, true), 'INPUT_INVALID', /"A"/, 'true'],
    [err('uniqueItems', { i: 1, j: 0 }, ['a', 'a']), 'INPUT_INVALID', /items 0 and 1/, undefined],
    [err('oneOf', {}, 5), 'INPUT_INVALID', /allowed forms/, '5'],
    [err('dependentRequired', {}, {}), 'INPUT_INVALID', /ajv says/, undefined]
  ]
  for (const [e, code, message, value] of rows) {
    const [item] = contextFromAjv([e], 'body')
    t.equal(item?.code, code, `${e.keyword} code`)
    t.match(item?.message, message, `${e.keyword} message`)
    t.equal(item?.value, value, `${e.keyword} value`)
    t.equal(item?.source, 'body')
  }
  const noMessage = { ...err('custom', {}, 1), message: undefined } as ErrorObject
  t.equal(contextFromAjv([noMessage], 'body')[0]?.message, 'is invalid')
})

t.test('fields, sources, union folding and de-duplication', async t => {
  t.equal(fieldFromPointer('/pages/0/description'), 'pages[0].description')
  t.equal(fieldFromPointer('/a~1b/c~0d/10'), 'a/b.c~d[10]')
  t.equal(fieldFromPointer('', 'operations[3].entity'), 'operations[3].entity')
  t.equal(fieldFromPointer('/name', 'operations[3].entity'), 'operations[3].entity.name')
  t.equal(contextFromAjv([err('required', { missingProperty: 'x' }, {}, '/meta')], 'body')[0]?.field, 'meta.x')
  t.equal(contextFromAjv([err('minimum', { limit: 1 }, 0, '/limit')], 'querystring')[0]?.source, 'query')
  t.equal(contextFromAjv([err('pattern', { pattern: 'x' }, 'y', '/svc-flag')], 'headers')[0]?.source, 'header')
  t.equal(contextFromAjv([err('pattern', { pattern: 'x' }, 'y', '/id')], 'params')[0]?.source, undefined, 'path parameters have no convention source')
  const union = [
    err('type', { type: 'string' }, 5, '/x', '#/properties/x/anyOf/0/type'),
    err('type', { type: 'null' }, 5, '/x', '#/properties/x/anyOf/1/type'),
    err('anyOf', {}, 5, '/x', '#/properties/x/anyOf')
  ]
  const folded = contextFromAjv(union, 'body')
  t.equal(folded.length, 1, 'branch errors fold into the union error')
  t.equal(folded[0]?.code, 'INPUT_INVALID')
  const dup = contextFromAjv([err('type', { type: 'string' }, 5), err('type', { type: 'string' }, 5)], 'body')
  t.equal(dup.length, 1, 'identical items are reported once')
  t.equal(contextFromAjv([err('type', { type: 'object' }, [1])], 'body')[0]?.value, undefined, 'no value for arrays/objects')
})

t.test('one item per field: the most telling keyword speaks for a value that breaks several', async t => {
  const offset = contextFromAjv([err('maxLength', { limit: 24 }, 'x'.repeat(30)), err('format', { format: 'date-time' }, 'x'.repeat(30))], 'body')
  t.same(offset.map(i => i.code), ['INPUT_INVALID'], 'format beats length')
  const nullEnum = contextFromAjv([err('type', { type: 'string' }, null), err('enum', { allowedValues: ['A'] }, null)], 'body')
  t.same(nullEnum.map(i => i.code), ['INPUT_NULL'], 'type beats enum')
  const blank = contextFromAjv([err('pattern', { pattern: '^a' }, ''), err('minLength', { limit: 1 }, '')], 'body')
  t.same(blank.map(i => i.code), ['INPUT_BLANK'], 'blank beats pattern')
  const bounds = contextFromAjv([err('minLength', { limit: 3 }, 'ab'), err('maxItems', { limit: 1 }, 'ab')], 'body')
  t.equal(bounds.length, 1, 'two bounds on one value: the first one reported')
  const children = contextFromAjv([err('required', { missingProperty: 'a' }, {}, ''), err('required', { missingProperty: 'b' }, {}, ''), err('additionalProperties', { additionalProperty: 'c' }, {}, '')], 'body')
  t.same(children.map(i => i.field), ['a', 'b', 'c'], 'child-field keywords never compete')
  const twoFields = contextFromAjv([err('format', { format: 'email' }, 'x', '/a'), err('format', { format: 'email' }, 'y', '/b')], 'body')
  t.equal(twoFields.length, 2, 'different fields keep their own items')
})
