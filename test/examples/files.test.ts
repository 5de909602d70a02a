import t from 'tap'
import { build } from '../../examples/files.js'
import { signToken } from '../../plugins/auth/sign.js'
import { lintOpenApi } from '../../plugins/lint/openapi.js'

// examples/files.ts (docs/plugins/files.md) does what its page says.
const jwtSecret = 'a test secret of at least thirty-two bytes'
const headers = (extra: Record<string, string> = {}, scope = 'invoices:read invoices:write'): Record<string, string> =>
  ({ 'user-agent': 'files-example-test/1.0', authorization: `Bearer ${signToken({ secret: jwtSecret, sub: 'ann', scope })}`, ...extra })

t.test('an invoice\'s scan: upload, read back, remove', async t => {
  const app = await build({ jwtSecret, cursorSecret: 'a cursor secret of thirty-two bytes' })
  t.teardown(() => app.close())
  await app.ready()
  t.strictSame(lintOpenApi(app.swagger()), [], 'the OpenAPI document passes the convention linter')
  const invoice = (await app.inject({ method: 'POST', url: '/v1/invoices', headers: headers(), payload: { number: 'INV-1' } })).json()
  t.equal(invoice.scan, null)
  const url = `/v1/invoices/${invoice.id as string}/scan`
  const pdf = Buffer.from('%PDF-1.7 an invoice')
  t.equal((await app.inject({ method: 'PUT', url, headers: headers({ 'content-type': 'application/pdf' }), payload: pdf })).statusCode, 428)
  const put = await app.inject({ method: 'PUT', url, headers: headers({ 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="facture n°1.pdf"', 'if-match': invoice.etag }), payload: pdf })
  t.equal(put.statusCode, 204)
  const after = (await app.inject({ url: `/v1/invoices/${invoice.id as string}`, headers: headers() })).json()
  t.match(after.scan, { mediaType: 'application/pdf', filename: 'facture n°1.pdf', byteCount: String(pdf.length) })
  t.equal(after.etag, put.headers.etag)
  const got = await app.inject({ url, headers: headers({ accept: 'application/*' }) })
  t.equal(got.statusCode, 200)
  t.strictSame(got.rawPayload, pdf)
  t.equal(got.headers['content-disposition'], 'attachment; filename="facture n?1.pdf"; filename*=UTF-8\'\'facture%20n%C2%B01.pdf')
  t.equal((await app.inject({ url, headers: headers({ accept: 'image/png' }) })).statusCode, 406)
  t.equal((await app.inject({ method: 'PUT', url, headers: headers({ 'content-type': 'image/gif', 'if-match': after.etag }), payload: 'GIF89a' })).statusCode, 415)
  t.equal((await app.inject({ method: 'DELETE', url, headers: headers({ 'if-match': after.etag }) })).statusCode, 204)
  t.equal((await app.inject({ url, headers: headers() })).statusCode, 404)
})
