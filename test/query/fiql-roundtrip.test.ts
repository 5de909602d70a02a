import t from 'tap'
import fc from 'fast-check'
import { fields } from './fixtures.js'
import { filterArbitrary, wideValues } from './arbitraries.js'
import { parseFilter } from '../../plugins/query/fiql-check.js'
import { printFiql } from '../../plugins/query/fiql-print.js'
import { resolveFiqlLimits } from '../../plugins/query/fiql.js'

const roomy = resolveFiqlLimits({ maxLength: 100000, maxComparisons: 10000, maxListSize: 100 })

t.test('printed filters parse back to the same filter', async (t) => {
  fc.assert(fc.property(filterArbitrary(fields, wideValues, 4), (filter) => {
    const text = printFiql(filter)
    t.strictSame(parseFilter(text, fields, { limits: roomy }), filter, text)
  }), { numRuns: 500 })
})

t.test('relative selectors print and parse back inside an object attribute', async (t) => {
  const filter = parseFilter('source.system=="a b\\*";source.region=isnull=true,score=in=(1,2)', fields, { prefix: 'metadata' })
  const text = printFiql(filter, 'metadata')
  t.equal(text, 'source.system=="a b\\*";source.region=isnull=true,score=in=(1,2)')
  t.strictSame(parseFilter(text, fields, { prefix: 'metadata' }), filter)
})

t.test('printing: quotes only when needed, wildcards kept, OR inside AND parenthesized', async (t) => {
  const cases: Array<[string, string]> = [
    ['name==abc', 'name==abc'],
    ['name=="a b"', 'name=="a b"'],
    ["name=='a\"b'", 'name=="a\\"b"'],
    ['name==""', 'name==""'],
    ['name=like=""', 'name=like=""'],
    ['name=like=*', 'name=like=*'],
    ['name=="a* "', 'name=="a* "'],
    ['name=="a\\* "', 'name=="a\\* "'],
    ['name==\\\\', 'name=="\\\\"'],
    ['name=containsic=x', 'name=containsic=x'],
    ['pageCount=in=(1,2);(active==true,status==DRAFT)', 'pageCount=in=(1,2);(active==true,status==DRAFT)'],
    ['(pageCount=in=(1,2),active==true);status==DRAFT', '(pageCount=in=(1,2),active==true);status==DRAFT'],
    ['pageCount=in=(1,2),active==true;status==DRAFT', 'pageCount=in=(1,2),active==true;status==DRAFT']
  ]
  for (const [input, expected] of cases) t.equal(printFiql(parseFilter(input, fields)), expected, input)
})
