import t from 'tap'
import fc from 'fast-check'
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../plugins/problem/strict-json.js'
import { build, headers } from '../conventions/app.js'

/** The depth of a parsed value, by recursion: the model the scan of the text must agree with. */
function depthOf (value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf))
  if (typeof value === 'object' && value !== null) return 1 + Math.max(0, ...Object.values(value).map(depthOf))
  return 0
}

const nested = (depth: number, open = '[', close = ']', inner = '1'): string => open.repeat(depth) + inner + close.repeat(depth)

t.test('nestsDeeperThan reads the depth of valid JSON from its text', async t => {
  const table: Array<[string, number, boolean]> = [
    ['1', 0, false],
    ['[]', 0, true],
    ['[]', 1, false],
    ['{"a":{"b":[1]}}', 2, true],
    ['{"a":{"b":[1]}}', 3, false],
    ['["[[[[[[[[[[", "{{{{{{{{"]', 1, false], // brackets inside strings do not count
    ['["\\"[[[[[[[[[[[", "\\\\", [[1]]]', 2, true], // an escaped quote does not end the string; an escaped backslash does not escape it
    ['["\\"[[[[[[[[[[[", "\\\\", [[1]]]', 3, false],
    [nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH, false],
    [nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH, true],
    [nested(MAX_JSON_DEPTH + 1, '{"a":', '}'), MAX_JSON_DEPTH, true],
    [`[${'1,'.repeat(500)}1]`, 1, false] // long, shallow
  ]
  for (const [text, max, deeper] of table) t.equal(nestsDeeperThan(text, max), deeper, `${text.slice(0, 40)} deeper than ${max}`)
})

t.test('property: the scan agrees with the depth of the parsed value, for any JSON and any bound', async t => {
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 12 }), fc.integer({ min: 0, max: 14 }), (value, max) => {
    const text = JSON.stringify(value)
    return nestsDeeperThan(text, max) === (depthOf(JSON.parse(text)) > max)
  }), { numRuns: 2000 })
  t.pass('2,000 values')
})

t.test('a body nested deeper than MAX_JSON_DEPTH is a 400 problem, never the 500 of a stack overflow', async t => {
  const app = await build(t)
  const send = async (payload: string, url = '/echo', method: 'POST' | 'PATCH' = 'POST', type = 'application/json'): Promise<{ statusCode: number, body: string }> =>
    await app.inject({ method, url, headers: headers({ 'content-type': type }), payload })
  t.equal((await send(`{"a":${nested(MAX_JSON_DEPTH - 1)}}`)).statusCode, 200, `${MAX_JSON_DEPTH} levels`)
  for (const depth of [MAX_JSON_DEPTH + 1, 5_000, 100_000]) {
    const res = await send(`{"a":${nested(depth - 1)}}`)
    t.equal(res.statusCode, 400, `${depth} levels`)
    t.match(JSON.parse(res.body), { title: 'Bad Request', status: 400, detail: `The body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep, which is refused; send a flatter document.` })
  }
  t.equal((await send(`{"a":${nested(MAX_JSON_DEPTH, '{"b":', '}')}}`, '/merge', 'PATCH', 'application/merge-patch+json')).statusCode, 400, 'a +json type too')
  t.equal((await send(`{"a":"${'['.repeat(10_000)}"}`)).statusCode, 200, 'brackets in a string are text')
  const invalid = await send(`{"a":${nested(MAX_JSON_DEPTH + 1)}`)
  t.equal(invalid.statusCode, 400)
  t.match(JSON.parse(invalid.body), { detail: /not valid JSON/ }, 'invalid JSON is refused for its syntax first')
})
