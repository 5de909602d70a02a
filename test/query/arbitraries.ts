import fc from 'fast-check'
import type { Comparison, ComparisonOp, FieldDescriptor, FieldMap, FieldType, Filter, Operand, OrderingTerm, Scalar } from '../../model/query.js'
import { junction } from '../../model/query.js'

/** Values of each field type; text also supplies the literal segments of wildcard patterns. */
export type ValueArbitraries = { [K in Exclude<FieldType, 'string-array'>]: fc.Arbitrary<Scalar> } & { text: fc.Arbitrary<string>, enumValues?: never }

const instant = fc.date({ min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true })

/** Every value of each type, for the parse/print round trip. */
export const wideValues: ValueArbitraries = {
  // Any code point but U+0000, which a filter refuses (no PostgreSQL text can hold it).
  string: fc.string({ unit: 'binary', maxLength: 8 }).map((v) => v.replaceAll('\u0000', '\u0001')),
  text: fc.string({ unit: fc.constantFrom('a', 'B', '*', '\\', '"', "'", ' ', ';', ',', '(', ')', '=', '!', 'é', '😀', '%', '_'), maxLength: 5 }),
  int32: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  int64: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
  decimal: fc.tuple(fc.bigInt(), fc.nat({ max: 6 })).map(([n, scale]) => {
    const digits = (n < 0n ? -n : n).toString().padStart(scale + 1, '0')
    return (n < 0n ? '-' : '') + (scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`)
  }),
  date: instant.map((d) => d.toISOString().slice(0, 10)),
  'date-time': instant.map((d) => d.toISOString()),
  boolean: fc.boolean(),
  enum: fc.constant('') // replaced by the field's own values
}

/**
 * Small pools, so generated data and filters meet: duplicates, nulls, equal numbers in other
 * spellings. The letters beyond ASCII (Latin-1, Latin Extended-A, Greek, Cyrillic) have one
 * lower case, the same in every Unicode version, so any UTF-8 fold collation agrees on them.
 */
export const POOLS = {
  string: ['', 'a', 'A', 'ab', 'aB', 'b', 'abc', 'a b', 'a%b', 'a_b', 'a\\b', '*', 'x*y', 'é', 'É', 'z😀', '😀', '\uFFFD', '\uE000', 'ß', 'SS', 'ı', 'a"b', "o'k",
    'Émile', 'ÉMILE ZOË', 'Zoë Ünïcode', 'Łódź', 'ŁÓDŹ', 'Ωμέγα', 'ΩΜΈΓΑ', 'Жук', 'жук'],
  fragments: ['', 'a', 'A', 'b', '%', '_', '\\', '*', 'é', '😀', 'ab', 'S', 'É', 'ë', 'ÜNÏ', 'ł', 'Ó', 'ω', 'ΜΈ', 'Ж', 'ук'],
  int32: [-(2 ** 31), -1, 0, 1, 2, 100, 2 ** 31 - 1],
  int64: ['-9223372036854775808', '-1', '0', '1', '42', '9007199254740993', '9223372036854775807'],
  decimal: ['-10.5', '-0.01', '-0.00', '0', '0.0', '1', '1.10', '1.1', '10.25', '99999999999999.9999'],
  date: ['0001-01-01', '1999-12-31', '2024-02-29', '2024-03-01', '9999-12-31'],
  'date-time': ['0001-01-01T00:00:00.000Z', '1970-01-01T00:00:00.000Z', '2023-12-31T23:59:59.999Z', '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00.001Z'],
  tags: ['a', 'b', 'x', 'y z', 'A']
}

export const pooledValues: ValueArbitraries = {
  string: fc.constantFrom(...POOLS.string),
  text: fc.constantFrom(...POOLS.fragments),
  int32: fc.constantFrom(...POOLS.int32),
  int64: fc.constantFrom(...POOLS.int64),
  decimal: fc.constantFrom(...POOLS.decimal),
  date: fc.constantFrom(...POOLS.date),
  'date-time': fc.constantFrom(...POOLS['date-time']),
  boolean: fc.boolean(),
  enum: fc.constant('')
}

const cmp = (field: string, op: ComparisonOp, values: Operand[], ci = false): Comparison => ({ kind: 'cmp', field, op, values, ci })

function comparisonArbitrary (field: FieldDescriptor, values: ValueArbitraries): fc.Arbitrary<Comparison> {
  const path = field.path
  const scalar: fc.Arbitrary<Scalar> = field.type === 'enum'
    ? fc.constantFrom(...(field.enumValues ?? []))
    : field.type === 'string-array' ? fc.constantFrom(...POOLS.tags) : values[field.type]
  const list = fc.array(scalar, { minLength: 1, maxLength: 3 })
  const options: Array<fc.Arbitrary<Comparison>> = [
    fc.tuple(fc.constantFrom<ComparisonOp>('eq', 'ne'), scalar).map(([op, v]) => cmp(path, op, [v])),
    fc.tuple(fc.constantFrom<ComparisonOp>('in', 'out'), list).map(([op, vs]) => cmp(path, op, vs)),
    fc.boolean().map((b) => cmp(path, 'isnull', [b]))
  ]
  if (field.type !== 'string-array') {
    options.push(fc.tuple(fc.constantFrom<ComparisonOp>('lt', 'le', 'gt', 'ge'), scalar).map(([op, v]) => cmp(path, op, [v])))
  }
  if (field.type === 'string') {
    const segments = (min: number): fc.Arbitrary<string[]> => fc.array(values.text, { minLength: min, maxLength: 4 })
    options.push(
      fc.tuple(fc.constantFrom<ComparisonOp>('eq', 'ne'), segments(2)).map(([op, s]) => cmp(path, op, [{ wildcard: s }])),
      fc.tuple(fc.constantFrom<ComparisonOp>('contains', 'startswith', 'endswith'), values.text, fc.boolean()).map(([op, v, ci]) => cmp(path, op, [v], ci)),
      fc.tuple(fc.constantFrom<ComparisonOp>('like', 'notlike'), segments(1), fc.boolean()).map(([op, s, ci]) => cmp(path, op, [{ wildcard: s }], ci))
    )
  }
  return fc.oneof(...options)
}

/** Random normalized filters (as the parser builds them) over the filterable fields. */
export function filterArbitrary (fields: FieldMap, values: ValueArbitraries, maxDepth = 3): fc.Arbitrary<Filter> {
  const comparisons = [...fields.values()].filter((f) => f.filterable).map((f) => comparisonArbitrary(f, values))
  const leaf = fc.oneof(...comparisons)
  const tree = fc.letrec<{ node: Filter }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', maxDepth, withCrossShrink: true },
      leaf,
      fc.tuple(fc.constantFrom<'and' | 'or'>('and', 'or'), fc.array(tie('node'), { minLength: 2, maxLength: 3 }))
        .map(([kind, children]) => junction(kind, children) as Filter)
    )
  }))
  return tree.node
}

/** Random orderings of the sortable fields (distinct), ending with the id as the resolver does. */
export function orderingArbitrary (fields: FieldMap): fc.Arbitrary<OrderingTerm[]> {
  const sortable = [...fields.values()].filter((f) => f.sortable && f.path !== 'id').map((f) => f.path)
  return fc.uniqueArray(fc.constantFrom(...sortable), { maxLength: 3 }).chain((paths) =>
    fc.array(fc.constantFrom<'asc' | 'desc'>('asc', 'desc'), { minLength: paths.length + 1, maxLength: paths.length + 1 })
      .map((dirs) => [...paths, 'id'].map((field, i) => ({ field, direction: dirs[i] as 'asc' | 'desc' }))))
}
