import t from 'tap'
import { build, books, type Book } from '../../examples/memory-collection.js'

const ids = (body: { results: Book[] }): string[] => body.results.map((b) => b.id)

t.test('the memory example pages, filters and orders its own array', async (t) => {
  const app = await build()
  t.teardown(() => app.close())

  const first = await app.inject('/books')
  t.equal(first.statusCode, 200)
  const page = first.json()
  t.strictSame(ids(page), ['b6', 'b4', 'b2'], 'default ordering by title, default limit 3')
  t.equal(page.paging.limit, 3)
  const second = (await app.inject(page.paging.next.url.replace('http://localhost:80', ''))).json()
  t.strictSame(ids(second), ['b1', 'b5', 'b3'])
  t.equal(second.paging.next, null)

  const table: Array<[string, string[]]> = [
    ['/books?ordering=-year&limit=2', ['b3', 'b2']],
    [`/books?filter=${encodeURIComponent('year=ge=1950;tags==classic')}`, ['b3']],
    [`/books?authorFilter=${encodeURIComponent('country==GB')}&ordering=year`, ['b4', 'b1']],
    ['/books?author.country', ['b6']],
    ['/books?tags=sf&tags=dystopia&limit=10&ordering=id', ['b1', 'b2', 'b3', 'b4', 'b5']],
    ['/books?title=*World', ['b4']]
  ]
  for (const [url, expected] of table) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 200, url)
    t.strictSame(ids(res.json()), expected, url)
  }

  const counted = (await app.inject('/books?offset=0&totalCount=true&authorFilter=country==US')).json()
  t.strictSame(counted.paging, { limit: 3, offset: 0, totalCount: 2, next: null, previous: null })

  const searched = await app.inject({ method: 'POST', url: '/books/search', payload: { tags: ['sf', 'classic'], ordering: 'title', paging: { limit: 2 } } })
  t.equal(searched.statusCode, 200)
  t.strictSame(ids(searched.json()), ['b4', 'b2'])
  t.match(searched.json().paging.next.url, /^http:\/\/localhost:80\/books\?limit=2&cursor=[\w-]+&tags=sf&tags=classic&ordering=title$/)

  const refused = await app.inject('/books?year=old&limit=0')
  t.equal(refused.statusCode, 400)
  t.strictSame(refused.json().context.map((c: { field: string }) => c.field), ['limit', 'year'])
  t.equal(books.length, 6)
})

t.test('the example serves any array given to it', async (t) => {
  const app = await build({}, [])
  t.teardown(() => app.close())
  t.strictSame((await app.inject('/books')).json(), { results: [], paging: { limit: 3, next: null, previous: null } })
})
