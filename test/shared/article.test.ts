import t from 'tap'
import { withArticle } from '../../plugins/shared/article.js'

t.test('an entity name with its indefinite article', async t => {
  const cases: Array<[string, boolean, string]> = [
    ['author', false, 'an author'],
    ['document', false, 'a document'],
    ['invoice', true, 'An invoice'],
    ['order', false, 'an order'],
    ['entry', true, 'An entry'],
    ['user', false, 'a user'],
    ['note', true, 'A note']
  ]
  for (const [noun, capital, expected] of cases) t.equal(withArticle(noun, capital), expected, expected)
})
