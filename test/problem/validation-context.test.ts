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
    [err('type', { type: 'integer,null' }, 'x'), 'INPUT_INVALID', /^must be integer or null, not string$/, 'x'],
    [err('minLength', { limit: 1 }, '  '), 'INPUT_BLANK', /blank/, '  '],
    [err('minLength', { limit: 3 }, 'ab'), 'INPUT_MIN_VALUE', /at least 3 characters/, 'ab'],
    [err('maxLength', { limit: 3 }, 'abcd'), 'INPUT_MAX_VALUE', /at most 3 characters/, 'abcd'],
    [err('maxLength', { limit: 100 }, 'x'.repeat(101)), 'INPUT_MAX_VALUE', /at most 100 characters/, 'x'.repeat(100) + '…'],
    [err('pattern', { pattern: '^a$' }, 'b'.repeat(500)), 'INPUT_INVALID', /pattern/, 'b'.repeat(100) + '…'],
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
  const param = contextFromAjv([err('pattern', { pattern: 'x' }, 'y', '/id')], 'params')[0]
  t.notOk(param !== undefined && 'source' in param, 'path parameters: no source, the convention names body, query and header only')
  t.match(param, { code: 'INPUT_INVALID', field: 'id', value: 'y' }, 'and the field, code and value as for other parts')
  t.equal(contextFromAjv([err('pattern', { pattern: 'x' }, 'y', '/id')], 'cookies')[0]?.source, undefined, 'a part the convention cannot name has no source')
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
  t.strictSame(offset.map(i => i.code), ['INPUT_INVALID'], 'format beats length')
  const nullEnum = contextFromAjv([err('type', { type: 'string' }, null), err('enum', { allowedValues: ['A'] }, null)], 'body')
  t.strictSame(nullEnum.map(i => i.code), ['INPUT_NULL'], 'type beats enum')
  const blank = contextFromAjv([err('pattern', { pattern: '^a' }, ''), err('minLength', { limit: 1 }, '')], 'body')
  t.strictSame(blank.map(i => i.code), ['INPUT_BLANK'], 'blank beats pattern')
  const bounds = contextFromAjv([err('minLength', { limit: 3 }, 'ab'), err('maxItems', { limit: 1 }, 'ab')], 'body')
  t.equal(bounds.length, 1, 'two bounds on one value: the first one reported')
  const children = contextFromAjv([err('required', { missingProperty: 'a' }, {}, ''), err('required', { missingProperty: 'b' }, {}, ''), err('additionalProperties', { additionalProperty: 'c' }, {}, '')], 'body')
  t.strictSame(children.map(i => i.field), ['a', 'b', 'c'], 'child-field keywords never compete')
  const twoFields = contextFromAjv([err('format', { format: 'email' }, 'x', '/a'), err('format', { format: 'email' }, 'y', '/b')], 'body')
  t.equal(twoFields.length, 2, 'different fields keep their own items')
})

t.test('a type error says what was sent; its value stays the convention\'s string', async t => {
  // [expected type, data sent, message, value]: "3.5" the string and 3.5 the number read alike in value, not in the message.
  const rows: Array<[string, unknown, string, string | undefined]> = [
    ['string,null', 3.5, 'must be string or null, not number', '3.5'],
    ['string', 12, 'must be string, not integer', '12'],
    ['integer', 3.5, 'must be integer, not number', '3.5'],
    ['integer', '3', 'must be integer, not string', '3'],
    ['boolean', 'true', 'must be boolean, not string', 'true'],
    ['string', true, 'must be string, not boolean', 'true'],
    ['string', [1], 'must be string, not array', undefined],
    ['array', { a: 1 }, 'must be array, not object', undefined]
  ]
  for (const [type, data, message, value] of rows) {
    t.strictSame(contextFromAjv([err('type', { type }, data, '/amount')], 'body'), [{ code: 'INPUT_INVALID', message, field: 'amount', source: 'body', ...(value === undefined ? {} : { value }) }], `${type} ← ${JSON.stringify(data)}`)
  }
})

t.test('a value no branch of a union takes: the message names each form a branch takes', async t => {
  const union = (schema: unknown, data: unknown): ErrorObject => ({ ...err('anyOf', {}, data), schema } as ErrorObject)
  const empty = { type: 'string', maxLength: 0 }
  // [branches (Ajv's e.schema with verbose), data sent, message]
  const rows: Array<[unknown, unknown, string]> = [
    [[{ type: 'string', format: 'int64', maxLength: 40 }, empty], '09223372036854775807', 'must be a 64-bit integer written as a string, like "9007199254740993" or an empty string'],
    [[{ anyOf: [{ type: 'string', format: 'decimal' }, empty] }, { type: 'null' }, { type: 'array', items: {}, maxItems: 3 }], 10.2, 'must be a decimal number written as a string, like "-12.50", an empty string, null or an array, not number'],
    [[{ anyOf: [{ type: 'boolean' }, empty] }, { type: 'null' }], 'true', 'must be a boolean (true or false), an empty string or null'],
    [[{ type: 'integer', minimum: 1, maximum: 9 }, { type: 'null' }], 'x', 'must be an integer from 1 to 9 or null, not string'],
    [[{ type: 'integer', minimum: 1 }, { type: 'number', maximum: 2 }], true, 'must be an integer of at least 1 or a number of at most 2, not boolean'],
    [[{ type: 'number' }, { type: 'integer', minimum: 3, maximum: 3 }], 'x', 'must be a number or an integer of 3, not string'],
    [[{ type: 'number', minimum: 0 }], 7, 'must be a number of at least 0'],
    [[{ type: 'string', enum: ['A', 'B'] }, { const: 'C' }, { type: 'null' }], 'D', 'must be A, B, C or null'],
    [[{ type: 'string', minLength: 1, maxLength: 5, description: 'a name' }, { type: 'string', pattern: '^-?[0-9]*$' }], 'x'.repeat(6), 'must be a string from 1 to 5 characters or a string matching the pattern ^-?[0-9]*$'],
    [[{ type: ['integer', 'array'] }, { type: 'object', properties: {} }], 'x', 'must be an integer, an array or an object, not string'],
    [[{ type: 'null' }, { type: 'null' }], 1, 'must be null, not integer'],
    [[{ type: 'string', format: 'date' }], null, 'must be a calendar date like 2024-05-01, not null'],
    // Forms it cannot name, or a value whose fault may lie inside it: the general message.
    [[{ type: 'string', multipleOf: 2 }], 'x', 'does not match any of the allowed forms'],
    [[{ $ref: 'X' }], 'x', 'does not match any of the allowed forms'],
    [[true], 'x', 'does not match any of the allowed forms'],
    [[{ title: 'no type' }], 'x', 'does not match any of the allowed forms'],
    [[{ anyOf: 'broken' }], 'x', 'does not match any of the allowed forms'],
    [[{ type: 'string' }], { a: 1 }, 'does not match any of the allowed forms'],
    [undefined, 'x', 'does not match any of the allowed forms']
  ]
  for (const [schema, data, message] of rows) {
    t.equal(contextFromAjv([union(schema, data)], 'body')[0]?.message, message, JSON.stringify(schema))
  }
})

t.test('a query item names the parameter, not the position of a repeated value', async t => {
  const items = contextFromAjv([err('maxLength', { limit: 2 }, 'abc', '/name/1'), err('format', { format: 'date' }, 'x', '/effectiveDate/0'), err('minimum', { limit: 1 }, 0, '/limit')], 'querystring')
  t.strictSame(items.map(i => [i.field, i.value]), [['name', 'abc'], ['effectiveDate', 'x'], ['limit', '0']])
  t.equal(contextFromAjv([err('maxLength', { limit: 2 }, 'abc', '/names/1')], 'body')[0]?.field, 'names[1]', 'a body keeps the position')
})

t.test('a violation by the part as a whole names its root, $, as the field', async t => {
  // [errors, part, field]: the convention gives every validation item a field; "" named nothing.
  const rows: Array<[ErrorObject, string, string]> = [
    [err('type', { type: 'object' }, [1, 2], ''), 'body', '$'],
    [err('type', { type: 'object' }, null, ''), 'body', '$'],
    [err('minProperties', { limit: 1 }, {}, ''), 'body', '$'],
    [err('type', { type: 'object' }, 'x', ''), 'querystring', '$'],
    [err('type', { type: 'object' }, 'x', '/meta'), 'body', 'meta'],
    [err('required', { missingProperty: 'name' }, {}, ''), 'body', 'name']
  ]
  for (const [e, part, field] of rows) t.equal(contextFromAjv([e], part)[0]?.field, field, `${e.keyword} at "${e.instancePath}" of ${part}`)
  t.equal(contextFromAjv([err('type', { type: 'object' }, 'x', '')], 'body', 'operations[0].entity')[0]?.field, 'operations[0].entity', 'under a prefix the prefix is the field')
})
