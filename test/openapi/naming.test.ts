import t from 'tap'
import { nameOperation, successDescription } from '../../plugins/openapi/naming.js'

// operationIds from the method and the path as the convention shapes it, and the descriptions of success answers.

const served = new Map([['authors', 'author'], ['documents', 'document']])

t.test('operationIds', async t => {
  const cases: Array<[string, string, boolean, string]> = [
    ['GET', '/v1/authors', true, 'listAuthors'],
    ['HEAD', '/v1/authors', true, 'headAuthors'],
    ['POST', '/v1/authors', false, 'createAuthor'],
    ['PATCH', '/v1/authors', false, 'bulkAuthors'],
    ['PUT', '/v1/authors', false, 'replaceAuthors'],
    ['DELETE', '/v1/authors', false, 'deleteAuthors'],
    ['POST', '/v1/authors/search', true, 'searchAuthors'],
    ['GET', '/v1/authors/:authorId', false, 'getAuthor'],
    ['PUT', '/v1/authors/:authorId', false, 'replaceAuthor'],
    ['PATCH', '/v1/authors/:authorId', false, 'updateAuthor'],
    ['DELETE', '/v1/authors/:authorId', false, 'deleteAuthor'],
    ['POST', '/v1/authors/:authorId', false, 'postAuthor'],
    ['OPTIONS', '/v1/authors/:authorId', false, 'optionsAuthor'],
    ['GET', '/v1/authors/:authorId/documents', true, 'listAuthorDocuments'],
    ['POST', '/v1/authors/:authorId/documents', false, 'createAuthorDocument'],
    ['POST', '/v1/authors/:authorId/documents/search', true, 'searchAuthorDocuments'],
    // An item parameter not named <entity>Id: the served collection's entity, else the segment.
    ['GET', '/v1/documents/:id', false, 'getDocument'],
    ['GET', '/v2/things/:id', false, 'getThings'],
    // Not a served collection and no collection read: the method and the words.
    ['POST', '/v1/orders', false, 'postOrders'],
    // A collection read of its own (config.collection) that is no served collection.
    ['POST', '/v1/things', true, 'createThings'],
    ['GET', '/health', false, 'getHealth'],
    ['GET', '/openapi.json', false, 'getOpenapiJson'],
    ['POST', '/search', false, 'postSearch'],
    ['GET', '/', false, 'get'],
    ['POST', '/_webhooks/scanner/document-scanned', false, 'receiveScannerDocumentScanned'],
    ['PUT', '/_webhooks/billing/', false, 'receiveBilling'],
    ['OPTIONS', '/_webhooks/scanner/document-scanned', false, 'optionsScannerDocumentScanned']
  ]
  for (const [method, url, read, id] of cases) t.equal(nameOperation(method, url, served, read).operationId, id, `${method} ${url}`)
})

t.test('descriptions of success answers', async t => {
  const describe = (method: string, url: string, status: number, read = false): string => successDescription(method, status, nameOperation(method, url, served, read), served)
  t.equal(describe('GET', '/v1/authors/:authorId', 200), 'The author.')
  t.equal(describe('GET', '/v1/authors', 200, true), 'A page of the authors.')
  t.equal(describe('GET', '/v1/authors/:authorId/documents', 200, true), 'A page of the documents of the author.')
  t.equal(describe('POST', '/v1/authors/search', 200, true), 'A page of the authors that match the search.')
  t.equal(describe('POST', '/v1/authors/:authorId/documents/search', 200, true), 'A page of the documents of the author that match the search.')
  t.equal(describe('POST', '/v1/authors', 201), 'The created author, at the path in Location.')
  t.equal(describe('POST', '/v1/authors/:authorId/documents', 201), 'The created document of the author, at the path in Location.')
  t.equal(describe('PATCH', '/v1/authors', 200), 'One result per operation, in the order of the request.')
  t.equal(describe('HEAD', '/v1/authors', 200, true), 'The headers a GET answers with 200, without a body.')
  t.equal(describe('PUT', '/v1/authors/:authorId', 204), 'No Content')
  t.equal(describe('POST', '/v1/things', 201, true), 'The created things, at the path in Location.', 'no entity name known: the collection\'s')
  t.equal(describe('GET', '/health', 200), 'OK')
  t.equal(describe('GET', '/health', 299), '299', 'a status without a reason phrase')
})
