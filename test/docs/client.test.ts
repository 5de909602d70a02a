import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import openapiTS, { astToString } from 'openapi-typescript'
import { signToken } from '../../plugins/auth/sign.js'
import { SECRET } from '../resource/helper.js'
import { startService } from '../service/service.js'
import { toolEnv } from '../support/child-env.js'

// docs/client.md: types generated from the running service's /openapi.json, the recipe type-checked
// against them, then run against the service.
interface Client {
  POST: (path: string, init: unknown) => Promise<{ response: Response }>
  GET: (path: string, init: unknown) => Promise<{ data?: { results: Array<{ name: string }> } }>
}
interface Recipe {
  referenceClient: (base: string, token: string) => Client
  authorWithInvoices: (client: Client, name: string, email: string) => Promise<unknown>
}

const root = join(import.meta.dirname, '..', '..')
const dir = join(root, 'examples', 'client')

t.test('a typed client from /openapi.json creates, lists with a filter, and gets typed problems', { timeout: 240000 }, async t => {
  const { base } = await startService(t)
  const res = await fetch(`${base}/openapi.json`, { headers: { 'user-agent': 'client-test/1' } })
  t.equal(res.status, 200)
  writeFileSync(join(dir, 'reference-api.d.ts'), astToString(await openapiTS(await res.json() as never)))

  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  const checked = await promisify(execFile)(process.execPath, [tsc, '--noEmit', '-p', join(dir, 'tsconfig.json')], { env: toolEnv() }).then(() => '', (err: { stdout?: string }) => err.stdout ?? String(err))
  t.equal(checked, '', 'the recipe type-checks against the generated types')

  // Its types exist once generated above, so the module is typed here by hand, not by the check of the tests.
  const recipe = '../../examples/client/client.js'
  const { referenceClient, authorWithInvoices } = await import(recipe) as Recipe
  const token = signToken({ secret: SECRET, sub: 'client', scope: 'authors:read authors:write documents:read documents:write' })
  const client = referenceClient(base, token)
  const first = await authorWithInvoices(client, 'Ann Leckie', 'ann@example.com')
  t.match(first, { author: { name: 'Ann Leckie', createdBy: 'client' }, invoices: [] }, 'created, then listed with a filter')
  const author = (first as { author: { id: string } }).author

  const doc = await client.POST('/v1/documents', { body: { name: 'Ancillary Justice', kind: 'INVOICE', authorId: author.id } })
  t.equal(doc.response.status, 201)
  const again = await authorWithInvoices(client, 'Ann Leckie', 'not an email')
  t.match(again, { title: 'Invalid Data', status: 400, requestId: String, context: [{ field: 'email', code: 'INPUT_INVALID' }] }, 'a typed problem')

  const listed = await client.GET('/v1/documents', { params: { query: { authorId: [author.id], kind: ['INVOICE'] } } })
  t.strictSame(listed.data?.results.map((d: { name: string }) => d.name), ['Ancillary Justice'], 'the filter reaches the service as simple filters')

  const reader = referenceClient(base, signToken({ secret: SECRET, sub: 'reader', scope: 'authors:read' }))
  const refused = await authorWithInvoices(reader, 'Rob', 'rob@example.com')
  t.match(refused, { title: 'Forbidden', status: 403 }, 'a token without the scope')
})
