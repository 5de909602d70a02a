import t from 'tap'
import Fastify from 'fastify'
import { check } from '../../check/index.js'
import { auth, conventions, cors, createStore, methods, openapi, problem, problemServerOptions, query, resource, validation } from '../../index.js'
import { authors } from '../../routes/v1/authors.js'
import { documents } from '../../routes/v1/documents.js'
import { CURSOR_SECRET, SECRET, listen, token } from '../resource/helper.js'

// Each plugin's rules fail when that plugin's behaviour is switched off through its options:
// the reference service's plugins, registered in app.ts's order with one option of one plugin
// changed, fail that rule and no other.

type Overrides = Partial<Record<'problem' | 'conventions' | 'methods', Record<string, unknown>>>

// One store for the file: each case's service registers the same resources on it, and the
// check's verdicts do not depend on what earlier cases wrote.
const store = createStore({ dataDir: 'memory' })
t.teardown(async () => { await store.close() })

async function service (t: Tap.Test, overrides: Overrides): Promise<string> {
  const app = Fastify({ ...problemServerOptions })
  t.teardown(async () => { await app.close() })
  await app.register(problem, overrides.problem ?? {})
  await app.register(validation)
  await app.register(conventions, overrides.conventions ?? {})
  await app.register(cors, { origins: [] })
  await app.register(methods, overrides.methods ?? {})
  await app.register(auth, { verifier: { secret: SECRET } })
  await app.register(openapi)
  await app.register(query, { cursorSecret: CURSOR_SECRET, defaultLimit: 20, maxLimit: 100 })
  await app.register(resource, { store, resources: [authors, documents] })
  return await listen(app)
}

const CASES: Array<[string, keyof Overrides, Record<string, unknown>, string]> = [
  ['conventions without its User-Agent rule', 'conventions', { userAgent: false }, 'headers.user-agent'],
  ['conventions without its Accept rule', 'conventions', { accept: false }, 'headers.accept'],
  ['conventions serving HTTP/1.0', 'conventions', { httpVersion: false }, 'versioning.http-1.0'],
  ['methods without its OPTIONS answers', 'methods', { options: false }, 'methods.options'],
  ['problem reading another request-id header', 'problem', { requestIdHeader: 'x-correlation-id' }, 'headers.request-id']
]

for (const [name, plugin, options, rule] of CASES) {
  t.test(`${name}: ${rule} fails, and no other rule`, async t => {
    const base = await service(t, { [plugin]: options })
    const bearer = token('checker')
    for (const n of [1, 2, 3]) {
      await fetch(`${base}/v1/authors`, { method: 'POST', headers: { 'user-agent': 'plugins-off/1', authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: `Author ${n}`, email: `a${n}@example.com` }) })
    }
    const result = await check({ baseUrl: base, token: bearer })
    const failed = result.verdicts.filter(v => v.verdict === 'fail')
    t.strictSame(failed.map(v => v.id), [rule], 'only the rule of the behaviour switched off', { failed })
    t.ok(result.verdicts.filter(v => v.verdict === 'pass').length >= 30, 'the rest still observed and passing')
  })
}
