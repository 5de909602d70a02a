import t from 'tap'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { chromium } from 'playwright-core'
import problem from '../../plugins/problem/index.js'
import openapi from '../../plugins/openapi/index.js'
import docs, { operationsSorter, tagsSorter } from '../../plugins/docs/index.js'
import { signToken } from '../../plugins/auth/sign.js'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../config.js'
import { SECRET, listen } from '../resource/helper.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** The reference service, which serves its docs page at /docs. */
async function referenceApp (): Promise<Awaited<ReturnType<typeof buildApp>>> {
  const { config } = loadConfig({ LOG_LEVEL: 'silent', AUTH_JWT_SECRET: SECRET, DATA_DIR: 'memory' })
  return await buildApp(config)
}

t.test('the page, its assets and the document need no token and no convention headers', async t => {
  const app = await referenceApp()
  t.teardown(() => app.close())
  // A browser's request: no Authorization, no `<product>/<version>` User-Agent, Accept text/html.
  const browser = { 'user-agent': 'Mozilla', accept: 'text/html' }
  const page = await app.inject({ url: '/docs', headers: browser })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.body, /<title>API docs<\/title>/)
  t.notMatch(page.body, /https?:\/\//, 'the page links to nothing outside the service')
  const js = await app.inject({ url: '/docs/static/swagger-ui-bundle.js', headers: browser })
  t.equal(js.statusCode, 200, 'assets are served locally')
  const init = await app.inject({ url: '/docs/static/swagger-initializer.js', headers: browser })
  t.match(init.body, /validatorUrl: null/, 'no badge from validator.swagger.io')
  t.match(init.body, '"urls":[{"url":"/openapi.json","name":"Reference resource service"}]', 'the page reads /openapi.json, named by its title')
  t.notMatch(init.body, /data:image|img\.src/, 'no logo image replaces the top bar\'s link')
  t.match(page.body, '/docs/static/theme/svc-docs.css')
  const css = await app.inject({ url: '/docs/static/theme/svc-docs.css', headers: browser })
  t.equal(css.body, '.swagger-ui .topbar .topbar-wrapper > a.link { display: none; }', 'and Swagger UI\'s own logo is hidden')
  const doc = await app.inject({ url: '/docs/json', headers: browser })
  t.equal(doc.statusCode, 200)
  t.strictSame(JSON.parse(doc.body), app.swagger(), '@fastify/swagger-ui\'s copy, unused by the page, is the same document as /openapi.json')
  t.notOk((app.swagger() as { paths: Record<string, unknown> }).paths['/docs'], 'the docs routes are not documented')
  // The API itself keeps its rules.
  t.equal((await app.inject({ url: '/v1/documents', headers: browser })).statusCode, 403, 'an API route still wants the User-Agent form')
})

t.test('operations sort by path and use, HEAD and OPTIONS last', async t => {
  const op = (method: string, path: string): { get: (k: string) => string } => ({ get: (k: string) => k === 'method' ? method : path })
  const ops = [op('options', '/a'), op('head', '/a'), op('delete', '/a/{id}'), op('get', '/b'), op('post', '/a'), op('get', '/a'), op('head', '/a/{id}')]
  const sorted = [...ops].sort(operationsSorter).map(o => `${o.get('method')} ${o.get('path')}`)
  t.strictSame(sorted, ['get /a', 'post /a', 'delete /a/{id}', 'get /b', 'head /a', 'options /a', 'head /a/{id}'])
  t.strictSame(['default', 'documents', 'authors'].sort(tagsSorter), ['authors', 'documents', 'default'], 'untagged operations last')
})

t.test('the document says how to get a token, in its description and on the security scheme', async t => {
  const app = await referenceApp()
  t.teardown(() => app.close())
  await app.ready()
  const doc = app.swagger() as unknown as { info: { description: string }, components: { securitySchemes: { bearerAuth: { description: string } } } }
  t.match(doc.info.description, /npm run token/)
  t.match(doc.components.securitySchemes.bearerAuth.description, /AUTH_JWT_SECRET.*npm run token/s)
  const bad = Fastify()
  await t.rejects(async () => { await bad.register(openapi, { tokenHelp: '' }).ready() }, /tokenHelp must be a non-empty string/)
  await t.rejects(async () => { await Fastify().register(openapi, { tokenHelp: 5 as never }).ready() }, /tokenHelp must be a non-empty string, got 5/)
})

t.test('routePrefix and title options; bad options refused at registration', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(openapi)
  await app.register(docs, { routePrefix: '/api/docs', title: 'Things' })
  const page = await app.inject({ url: '/api/docs' })
  t.equal(page.statusCode, 200)
  t.match(page.body, /<title>Things<\/title>/)
  t.equal((await app.inject({ url: '/docs' })).statusCode, 404)
  await app.close()
  // [openapi's options, docs' routePrefix, the document the page reads]: the served one, else swagger-ui's copy.
  const documents: Array<[Record<string, unknown>, string, string]> = [
    [{ routePrefix: '/spec.json', info: { title: 'Spec', version: '1' } }, '/api/docs', '{"url":"/spec.json","name":"Spec"}'],
    [{ routePrefix: false }, '/api/docs', '{"url":"/api/docs/json","name":"API"}']
  ]
  for (const [options, routePrefix, urls] of documents) {
    const other = Fastify()
    await other.register(problem)
    await other.register(openapi, options)
    await other.register(docs, { routePrefix })
    const init = await other.inject({ url: `${routePrefix}/static/swagger-initializer.js` })
    t.match(init.body, `"urls":[${urls}]`, JSON.stringify(options))
    await other.close()
  }
  const prefixed = Fastify()
  await prefixed.register(problem)
  await prefixed.register(async (api) => {
    await api.register(openapi)
    await api.register(docs)
  }, { prefix: '/v2' })
  t.match((await prefixed.inject({ url: '/v2/docs/static/swagger-initializer.js' })).body, '"urls":[{"url":"/v2/openapi.json","name":"API"}]', 'under a route prefix, the document\'s path has it')
  t.equal((await prefixed.inject({ url: '/v2/openapi.json' })).statusCode, 200)
  // The page without a trailing slash names its assets by absolute paths: the prefix's, which serve them.
  const assets = [...(await prefixed.inject({ url: '/v2/docs' })).body.matchAll(/(?:href|src)="([^"]+)"/g)].map(m => m[1] as string)
  t.ok(assets.length > 0)
  for (const asset of assets) t.equal((await prefixed.inject({ url: asset })).statusCode, 200, `under a route prefix, the page's ${asset} is served`)
  await prefixed.close()
  for (const opts of [{ routePrefix: 'docs' }, { routePrefix: '/docs/' }, { routePrefix: 5 }, { title: '' }, { title: 3 }]) {
    const bad = Fastify()
    await bad.register(openapi)
    await t.rejects(async () => { await bad.register(docs, opts as never).ready() }, TypeError, JSON.stringify(opts))
  }
  await t.rejects(async () => { await Fastify().register(docs).ready() }, /The docs plugin needs the openapi plugin registered before it/, 'needs the openapi plugin')
})

t.test('the viewer lists the operations in headless Chromium, and a call from it succeeds', { timeout: 240000, skip: existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM}; set CHROMIUM_PATH to run the browser test` }, async t => {
  const app = await referenceApp()
  t.teardown(() => app.close())
  const base = await listen(app)
  const profile = mkdtempSync(join(tmpdir(), 'svc-docs-chromium-'))
  t.teardown(() => { rmSync(profile, { recursive: true, force: true }) })
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
  })
  t.teardown(() => context.close())
  const outside: string[] = []
  const fetched: string[] = []
  // Anything not from the service is refused and recorded: the page must work offline.
  await context.route('**/*', async (route) => {
    const url = route.request().url()
    fetched.push(url)
    if (url.startsWith(base) || url.startsWith('data:')) return await route.continue()
    outside.push(url)
    return await route.abort()
  })
  const page = await context.newPage()
  await page.goto(`${base}/docs`)
  await page.waitForSelector('.opblock-summary-path', { timeout: 30000 })
  const title = await page.locator('.info .title').first().innerText()
  t.match(title, /Reference resource service/)
  t.ok(fetched.includes(`${base}/openapi.json`), 'the page reads the service\'s document')
  t.notOk(fetched.some(u => u.startsWith(`${base}/docs/json`)), 'and no copy of it')
  t.notOk(await page.locator('.topbar a.link').isVisible(), 'no logo in the top bar')
  t.equal(await page.locator('.topbar select').inputValue(), '/openapi.json', 'which names the document instead')
  const operations = await page.locator('.opblock-summary').evaluateAll(els => els.map(e => {
    const method = e.querySelector('.opblock-summary-method')?.textContent ?? ''
    const path = e.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? ''
    return `${method} ${path}`
  }))
  for (const op of ['GET /v1/documents', 'POST /v1/documents', 'PATCH /v1/documents', 'GET /v1/documents/{documentId}', 'DELETE /v1/authors/{authorId}', 'POST /_webhooks/scanner/document-scanned']) {
    t.ok(operations.includes(op), `${op} is listed`)
  }
  t.equal(operations[0], 'GET /v1/authors', 'the page opens on the resource operations')
  const authors = operations.filter(o => o.includes(' /v1/authors') && !o.includes('/documents'))
  const late = authors.findIndex(o => /^(HEAD|OPTIONS) /.test(o))
  t.ok(late > 0 && authors.slice(late).every(o => /^(HEAD|OPTIONS) /.test(o)), 'in each group, HEAD and OPTIONS come after the other operations')
  t.ok(operations.indexOf('GET /health') > operations.indexOf('GET /v1/documents'), 'health and the document itself come last')

  // Try it: authorize with a token, then call GET /v1/authors from the page.
  const token = signToken({ secret: SECRET, sub: 'docs-reader', scope: 'authors:read' })
  await page.locator('.auth-wrapper .authorize').click()
  t.match(await page.locator('.modal-ux').innerText(), /npm run token/, 'the Authorize dialog says how to get a token')
  await page.locator('#auth-bearer-value').fill(token)
  await page.locator('.modal-ux .auth-btn-wrapper .authorize').click()
  await page.locator('.modal-ux .btn-done').click()
  const block = page.locator('#operations-authors-listAuthors')
  await block.locator('.opblock-summary').click()
  await block.locator('.try-out__btn').click()
  await block.locator('.execute').click()
  await block.locator('.live-responses-table tbody .response-col_status').first().waitFor({ timeout: 30000 })
  const status = await block.locator('.live-responses-table tbody .response-col_status').first().innerText()
  t.match(status.trim(), /^200/, 'the call from the page succeeds')
  t.strictSame(outside, [], 'nothing fetched from outside the service')
})
