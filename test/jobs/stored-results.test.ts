import t from 'tap'
import fc from 'fast-check'
import { standIn, withResults } from '../../plugins/jobs/stored-results.js'

// A job's result is sent as the JSON text it is stored as: the answer is written with a
// placeholder in its place, which the text then replaces. Whatever the results and the rest
// hold, the answer must read as if the results had been parsed and written with it.

const json = fc.jsonValue().map(v => JSON.stringify(v))

t.test('the answer reads as the parsed results written in their places', async t => {
  fc.assert(fc.property(fc.array(fc.record({ other: fc.jsonValue(), result: fc.option(json) }), { maxLength: 6 }), (items) => {
    const results = items.map(i => i.result)
    const written = JSON.stringify({ items: items.map((i, n) => ({ before: i.other, result: standIn(i.result, n), after: i.other })) })
    const expected = { items: items.map(i => ({ before: i.other, result: i.result === null ? null : JSON.parse(i.result), after: i.other })) }
    t.strictSame(JSON.parse(withResults(written, results)), JSON.parse(JSON.stringify(expected)))
  }), { numRuns: 200 })
})

t.test('a result whose text looks like a placeholder, or holds one, is put in as it is', async t => {
  const mark = JSON.stringify(standIn('x', 1))
  const results = [mark, null, `[${mark}]`]
  const written = JSON.stringify(results.map((r, n) => standIn(r, n)))
  t.equal(withResults(written, results), `[${mark},null,[${mark}]]`)
})

t.test('an answer written without a placeholder is a fault, not broken JSON', async t => {
  t.throws(() => withResults('{"result":null}', ['{"a":1}']), /did not write the placeholder of result 0/)
  t.equal(withResults('{"result":null}', [null]), '{"result":null}', 'none expected: as written')
})
