import t from 'tap'
import fc from 'fast-check'
import { DEFAULT_FIQL_LIMITS, FIQL_OPERATORS, parseFiql, resolveFiqlLimits, type FiqlNode } from '../../plugins/query/fiql.js'
import { QueryError } from '../../plugins/query/errors.js'

/** Compact picture of a syntax tree: `a == [["x"]]`, `and(… | …)`; `list` marks a parenthesized list. */
function show (node: FiqlNode): string {
  if (node.kind !== 'cmp') return `${node.kind}(${node.children.map(show).join(' | ')})`
  return `${node.selector} ${node.operator} ${JSON.stringify(node.args.map((a) => a.segments))}${node.list ? ' list' : ''}`
}

t.test('grammar', async (t) => {
  const cases: Array<[string, string]> = [
    ['name==abc', 'name == [["abc"]]'],
    ['metadata.source.system==erp', 'metadata.source.system == [["erp"]]'],
    ['a==x;b==y', 'and(a == [["x"]] | b == [["y"]])'],
    ['a==x,b==y', 'or(a == [["x"]] | b == [["y"]])'],
    // ; binds tighter than ,
    ['a==x;b==y,c==z', 'or(and(a == [["x"]] | b == [["y"]]) | c == [["z"]])'],
    ['a==x,b==y;c==z', 'or(a == [["x"]] | and(b == [["y"]] | c == [["z"]]))'],
    ['a==x;(b==y,c==z)', 'and(a == [["x"]] | or(b == [["y"]] | c == [["z"]]))'],
    ['(a==x)', 'a == [["x"]]'],
    ['((a==x;b==y);c==z)', 'and(a == [["x"]] | b == [["y"]] | c == [["z"]])'],
    ['a==x;(b==y;c==z)', 'and(a == [["x"]] | b == [["y"]] | c == [["z"]])'],
    ['(a==x,b==y),c==z', 'or(a == [["x"]] | b == [["y"]] | c == [["z"]])'],
    ['(a==x,b==y);c==z', 'and(or(a == [["x"]] | b == [["y"]]) | c == [["z"]])'],
    [' a == x ; b==y ', 'and(a == [["x"]] | b == [["y"]])'],
    ['\ta==x\n', 'a == [["x"]]'],
    // quoting and escapes
    ['a=="x y"', 'a == [["x y"]]'],
    ["a=='x;y,(z)'", 'a == [["x;y,(z)"]]'],
    ['a=="it\\"s"', 'a == [["it\\"s"]]'],
    ["a=='it\\'s'", 'a == [["it\'s"]]'],
    ["a==\"it's\"", 'a == [["it\'s"]]'],
    ['a=="\\\\"', 'a == [["\\\\"]]'],
    ['a==""', 'a == [[""]]'],
    ["a==''", 'a == [[""]]'],
    ['a==x\\;y', 'a == [["x;y"]]'],
    ['a==\\(', 'a == [["("]]'],
    ['a==x\\ y', 'a == [["x y"]]'],
    // wildcards: an unescaped * splits the value, quoted or not; \* is a literal star
    ['a==*x*', 'a == [["","x",""]]'],
    ['a=="*x y"', 'a == [["","x y"]]'],
    ['a==x\\*y', 'a == [["x*y"]]'],
    ['a=="x\\*y*"', 'a == [["x*y",""]]'],
    ['a==\\\\*', 'a == [["\\\\",""]]'],
    ['a==*', 'a == [["",""]]'],
    ['a==x?y', 'a == [["x?y"]]'],
    // lists
    ['a=in=(x,y,"z w")', 'a =in= [["x"],["y"],["z w"]] list'],
    ['a=out=( x , y )', 'a =out= [["x"],["y"]] list'],
    ['a=in=x', 'a =in= [["x"]]'],
    ['a==(x)', 'a == [["x"]] list'],
    // values with the characters of dates, decimals, signs and non-ASCII text
    ['d=ge=2024-01-01T00:00:00.000Z', 'd =ge= [["2024-01-01T00:00:00.000Z"]]'],
    ['n=lt=-10.25', 'n =lt= [["-10.25"]]'],
    ['a==é😀+/@.:', 'a == [["é😀+/@.:"]]'],
    ['a=="😀\\😀"', 'a == [["😀😀"]]']
  ]
  for (const [input, expected] of cases) t.equal(show(parseFiql(input)), expected, input)
})

t.test('every operator of the conventions is recognised, with its position', async (t) => {
  t.strictSame([...FIQL_OPERATORS.keys()].sort(), [
    '!=', '==', '=contains=', '=containsic=', '=endswith=', '=endswithic=', '=ge=', '=gt=', '=in=', '=isnull=',
    '=le=', '=like=', '=likeic=', '=lt=', '=notlike=', '=notlikeic=', '=out=', '=startswith=', '=startswithic='
  ])
  for (const operator of FIQL_OPERATORS.keys()) {
    const node = parseFiql(`abc ${operator} v`)
    t.match(node, { kind: 'cmp', selector: 'abc', operator, operatorAt: 4, position: 0, list: false }, operator)
  }
})

t.test('arguments keep their positions and the first wildcard', async (t) => {
  t.match(parseFiql('a=in=(x, "y*z")'), { args: [{ position: 6, wildcardAt: -1 }, { position: 9, wildcardAt: 11 }] })
  t.match(parseFiql('a==x\\*y*'), { args: [{ position: 3, wildcardAt: 7 }] })
})

t.test('syntax errors name the parameter and the position', async (t) => {
  const cases: Array<[string, string, number, RegExp]> = [
    ['', 'syntax', 0, /expression is empty/],
    ['   ', 'syntax', 0, /expression is empty/],
    ['a', 'syntax', 1, /Expected an operator .* at position 1, found the end/],
    ['a=x', 'syntax', 1, /Expected an operator .* at position 1, found "="/],
    ['a<5', 'syntax', 1, /Expected an operator/],
    ['a!x', 'syntax', 1, /Expected an operator/],
    ['a=foo=x', 'operator', 1, /Unknown operator "=foo=" at position 1; use one of ==, !=, =lt=/],
    ['a=LT=5', 'operator', 1, /Unknown operator "=LT="/],
    ['a==', 'syntax', 3, /Expected a value at position 3, found the end/],
    ['a==;b==c', 'syntax', 3, /Expected a value at position 3, found ";"/],
    ['==x', 'syntax', 0, /Expected an attribute name or "\(" at position 0/],
    ['a==x;', 'syntax', 5, /Expected an attribute name/],
    ['a==x,,b==y', 'syntax', 5, /Expected an attribute name/],
    ['()', 'syntax', 1, /Expected an attribute name/],
    ['(a==x', 'syntax', 5, /Expected "\)" \(closing the "\(" at position 0\) at position 5/],
    ['a==x)', 'syntax', 4, /Unexpected "\)" at position 4/],
    ['a==x b==y', 'syntax', 5, /Unexpected "b" at position 5/],
    ['a==x=y', 'syntax', 4, /Unexpected "="/],
    ['a=="x', 'syntax', 3, /quoted value at position 3 has no closing quote/],
    ["a=='x\\'", 'syntax', 3, /no closing quote/],
    ['a==x\\', 'syntax', 4, /backslash at position 4 must be followed/],
    ['a=in=()', 'syntax', 6, /Expected a value at position 6/],
    ['a=in=(x,)', 'syntax', 8, /Expected a value at position 8/],
    ['a=in=(x', 'syntax', 7, /Expected "," or "\)" in the list at position 7/],
    ['a=in=(x;y)', 'syntax', 7, /Expected "," or "\)" in the list/],
    // Fuzz regression: a NUL reached PostgreSQL, which refused the statement with a 500.
    ['a==x\u0000y', 'value', 4, /NUL character \(U\+0000\) at position 4/]
  ]
  for (const [input, reason, position, message] of cases) {
    t.throws(() => parseFiql(input, 'nameFilter'), { name: 'QueryError', code: 'INPUT_INVALID', reason, parameter: 'nameFilter', position, message }, input)
  }
})

t.test('limits', async (t) => {
  const { maxLength, maxDepth, maxListSize, maxComparisons } = DEFAULT_FIQL_LIMITS
  t.strictSame({ maxLength, maxDepth, maxListSize, maxComparisons }, { maxLength: 2000, maxDepth: 10, maxListSize: 100, maxComparisons: 50 })

  const long = 'a==' + 'x'.repeat(maxLength - 3)
  t.ok(parseFiql(long), 'exactly the maximum length')
  t.throws(() => parseFiql(long + 'x'), { reason: 'limit', position: maxLength, message: /has 2001 characters; at most 2000/ })

  const nested = (n: number): string => '('.repeat(n) + 'a==x' + ')'.repeat(n)
  t.ok(parseFiql(nested(maxDepth)), 'the deepest nesting allowed')
  t.throws(() => parseFiql(nested(maxDepth + 1)), { reason: 'limit', position: maxDepth, message: /nest deeper than 10 levels/ })

  const list = (n: number): string => `a=in=(${Array.from({ length: n }, (_, i) => i).join(',')})`
  t.ok(parseFiql(list(maxListSize)), 'the longest list allowed')
  t.throws(() => parseFiql(list(maxListSize + 1)), { reason: 'limit', position: 5, message: /more than 100 values/ })

  const many = (n: number): string => Array.from({ length: n }, () => 'a==x').join(';')
  t.ok(parseFiql(many(maxComparisons)), 'the most comparisons allowed')
  t.throws(() => parseFiql(many(maxComparisons + 1)), { reason: 'limit', position: maxComparisons * 5, message: /more than 50 comparisons/ })

  const tight = resolveFiqlLimits({ maxLength: 30, maxDepth: 1, maxListSize: 2, maxComparisons: 2 })
  t.throws(() => parseFiql('((a==x))', 'filter', tight), { name: 'QueryError', reason: 'limit', position: 1 })
  t.throws(() => parseFiql('a=in=(1,2,3)', 'filter', tight), { name: 'QueryError', reason: 'limit' })
  t.throws(() => parseFiql('a==1;a==2;a==3', 'filter', tight), { name: 'QueryError', reason: 'limit', position: 10 })
  t.throws(() => parseFiql('a=='.padEnd(31, 'x'), 'filter', tight), { name: 'QueryError', reason: 'limit', position: 30 })
})

t.test('resolveFiqlLimits checks its options at setup', async (t) => {
  t.strictSame(resolveFiqlLimits(), DEFAULT_FIQL_LIMITS)
  t.strictSame(resolveFiqlLimits({ maxDepth: 100 }).maxDepth, 100)
  t.ok(Object.isFrozen(resolveFiqlLimits({})))
  const bad: Array<[string, unknown]> = [['maxLength', 0], ['maxDepth', 101], ['maxListSize', 1.5], ['maxComparisons', -1], ['maxLength', '10']]
  for (const [name, value] of bad) {
    t.throws(() => resolveFiqlLimits({ [name]: value }), new TypeError(`FIQL limits: ${name} must be a positive integer${name === 'maxDepth' ? ' up to 100' : ''}, got ${JSON.stringify(value)}`))
  }
})

t.test('any input either parses or fails with a QueryError at a position inside it', async (t) => {
  const alphabet = fc.constantFrom('a', 'b', '.', '=', '!', ';', ',', '(', ')', '"', "'", '\\', '*', ' ', 'in', 'lt', 'x', '1', '<', '~', 'é', '😀')
  fc.assert(fc.property(fc.string({ unit: alphabet, maxLength: 60 }), (input) => {
    try {
      parseFiql(input)
    } catch (err) {
      if (!(err instanceof QueryError)) throw err
      if (err.position === undefined || err.position < 0 || err.position > input.length) throw new Error(`position ${String(err.position)} of ${input}`)
      if (!err.message.includes(`position ${err.position}`) && err.reason !== 'syntax') throw new Error(err.message)
    }
  }), { numRuns: 2000 })
  t.pass('no other exception')
})
