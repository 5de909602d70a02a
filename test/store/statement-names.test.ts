import t from 'tap'
import fc from 'fast-check'
import { StatementNames } from '../../store/prepared.js'

t.test('a text is named the second time it is seen, and keeps its name', async t => {
  const names = new StatementNames(10)
  t.equal(names.nameOf('SELECT 1'), undefined, 'first run: unnamed')
  const name = names.nameOf('SELECT 1')
  t.equal(name, 'svc:auto:1', 'second run: named')
  t.equal(names.nameOf('SELECT 1'), name, 'later runs: the same name')
  t.equal(names.nameOf('SELECT 2'), undefined)
  t.equal(names.nameOf('SELECT 2'), 'svc:auto:2', 'another text, another name')
  t.equal(names.size, 2)
})

t.test('at most max texts are named; the rest run unnamed, the named keep their names', async t => {
  const names = new StatementNames(2)
  for (const text of ['a', 'a', 'b', 'b']) names.nameOf(text)
  t.equal(names.size, 2)
  t.equal(names.nameOf('c'), undefined)
  t.equal(names.nameOf('c'), undefined, 'a repeated text past the limit stays unnamed')
  t.equal(names.nameOf('a'), 'svc:auto:1')
  t.equal(names.nameOf('b'), 'svc:auto:2')
  t.equal(new StatementNames(0).nameOf('a'), undefined, 'max 0 names nothing')
})

t.test('texts seen once are forgotten together after a thousand of them', async t => {
  const names = new StatementNames(10)
  names.nameOf('early')
  for (let i = 0; i < 999; i++) names.nameOf(`one-off ${i}`)
  t.equal(names.nameOf('early'), 'svc:auto:1', 'still a candidate among the last thousand')
  names.nameOf('late')
  for (let i = 0; i < 1000; i++) names.nameOf(`other ${i}`)
  t.equal(names.nameOf('late'), undefined, 'forgotten once a thousand new texts came after it: seen once again')
  t.equal(names.nameOf('late'), 'svc:auto:2')
})

// The registry against a plain model of its rules (without the forgetting, which a run of
// fewer than a thousand distinct texts never reaches).
t.test('property: names match a model of the rules over any run of texts', async t => {
  fc.assert(fc.property(
    fc.integer({ min: 0, max: 6 }),
    fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'SELECT $1', ''), { maxLength: 80 }),
    (max, run) => {
      const names = new StatementNames(max)
      const seen = new Set<string>()
      const model = new Map<string, string>()
      for (const text of run) {
        let expected = model.get(text)
        if (expected === undefined && model.size < max) {
          if (seen.has(text)) {
            expected = `svc:auto:${model.size + 1}`
            model.set(text, expected)
          } else {
            seen.add(text)
          }
        }
        if (names.nameOf(text) !== expected) return false
      }
      // Distinct texts never share a name: pg would refuse the second on a connection holding the first.
      return new Set(model.values()).size === model.size && names.size === model.size
    }
  ), { numRuns: 500 })
})
