import { readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import { check, CheckError, RULES, type VerdictKind } from '../../check/index.js'
import { pluralName } from '../../check/rules/naming.js'
import { checkCommand, CHECK_HELP, type CheckIo } from '../../check/cli.js'
import { startFixture } from './fixture.js'

// A service written without the suite fails exactly what it breaks; the reports and the exit
// codes say so; the check stays within its budget, on its host, and says why when it cannot run.

const FIXTURE: Record<string, VerdictKind> = {
  'versioning.http-1.0': 'fail',
  'headers.user-agent': 'fail',
  'headers.accept': 'fail',
  'headers.content-type': 'fail', // Fastify parses text/plain: the body reaches validation (400)
  'headers.request-id': 'fail',
  'headers.execution-context': 'fail',
  'headers.service': 'fail',
  'headers.idempotency-key': 'fail',
  'headers.custom-names': 'pass',
  'headers.location': 'pass',
  'headers.content-language': 'fail',
  'headers.propagation': 'not checked',
  'cors.refused': 'fail',
  'cors.allowed': 'not applicable',
  'cors.headers': 'not applicable',
  'auth.missing': 'not applicable',
  'auth.scheme': 'not applicable',
  'auth.invalid-token': 'not applicable',
  'auth.forbidden': 'not checked',
  'auth.no-store': 'not checked',
  'errors.problem-body': 'fail',
  'errors.context-codes': 'not applicable',
  'errors.no-internals': 'pass',
  'errors.server-errors': 'not checked',
  'methods.not-found': 'pass',
  'methods.not-allowed': 'fail',
  'methods.options': 'fail',
  'methods.head': 'pass',
  'methods.no-redirects': 'pass',
  'methods.create': 'not checked',
  'methods.put': 'not checked',
  'methods.merge-patch': 'not checked',
  'methods.if-match': 'not checked',
  'methods.unmodified-since': 'not checked',
  'methods.if-match-required': 'not checked',
  'methods.delete': 'not checked',
  'etags.item': 'not applicable',
  'collections.envelope': 'fail',
  'collections.limit': 'not applicable',
  'collections.cursor-paging': 'not applicable',
  'collections.offset-paging': 'not applicable',
  'etags.collection': 'not applicable',
  'filters.simple': 'not applicable',
  'filters.fiql': 'not applicable',
  'sorting.ordering': 'not applicable',
  'search.post': 'not applicable',
  'idempotency.replay': 'not checked',
  'idempotency.reuse': 'not checked',
  'bulk.request': 'not applicable',
  'bulk.response': 'not checked',
  'naming.property-names': 'fail',
  'naming.standard-properties': 'fail',
  'naming.plural-arrays': 'fail',
  'naming.enums': 'not applicable',
  'naming.english': 'not checked',
  'serialization.date-times': 'fail',
  'serialization.decimals': 'fail',
  'webhooks.consumers': 'not checked'
}

function capture (files: Record<string, string> = {}, env: Record<string, string> = {}): CheckIo & { stdout: string[], stderr: string[] } {
  const stdout: string[] = []
  const stderr: string[] = []
  return {
    stdout,
    stderr,
    out: (text) => { stdout.push(text) },
    err: (line) => { stderr.push(line) },
    readFile: async (path) => { if (path in files) return files[path] as string; throw new Error('ENOENT: no such file') },
    env
  }
}

t.test('the fixture fails exactly what it breaks', async t => {
  const { base } = await startFixture(t)
  const result = await check({ baseUrl: base, collections: ['/items'] })
  t.strictSame(Object.fromEntries(result.verdicts.map(v => [v.id, v.verdict])), FIXTURE)
  t.strictSame(result.verdicts.map(v => v.id), RULES.map(r => r.id), 'every rule, in the list\'s order')
  for (const v of result.verdicts) {
    if (v.verdict === 'fail') t.ok(v.exchange !== undefined && v.reason !== undefined, `${v.id}: the reason and the exchange`)
    if (v.verdict === 'not applicable' || v.verdict === 'not checked') t.ok((v.reason ?? '') !== '', `${v.id}: why`)
  }
  t.match(result.verdicts.find(v => v.id === 'headers.user-agent'), { reason: 'without a User-Agent: expected 403, got 200', exchange: { request: { method: 'GET', path: '/items' }, response: { status: 200 } } })
  t.notOk('user-agent' in (result.verdicts.find(v => v.id === 'headers.user-agent')?.exchange?.request.headers ?? {}), 'the request really had no User-Agent')
})

t.test('reports and exit codes: text by section, JUnit one case per rule, TAP, JSON; 0, 1, 2', async t => {
  const { base } = await startFixture(t)
  const run = async (...argv: string[]): Promise<{ code: number, out: string, err: string }> => {
    const io = capture({}, argv.includes('--token-from-env') ? { SVC_CHECK_TOKEN: 'secret-from-the-environment' } : {})
    argv = argv.filter(a => a !== '--token-from-env')
    const code = await checkCommand(argv, io)
    return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') }
  }
  const text = await run(base, '--collection', '/items')
  t.equal(text.code, 1, 'a rule fails: 1')
  t.match(text.out, /\nHeaders\n {2}FAIL {2}headers\.user-agent +a request without a valid User-Agent is refused with 403\n {8}without a User-Agent: expected 403, got 200\n {8}> GET \/items\n/)
  t.match(text.out, /\n {2}pass {2}methods\.not-found /)
  t.match(text.out, /\n58 rules: 6 pass, 19 fail, 17 not applicable, 16 not checked; \d+ requests in \d+\.\d s$/)
  const withToken = await run(base, '--collection', '/items', '--only', 'headers.user-agent', '--token-from-env')
  t.notMatch(withToken.out, 'secret-from-the-environment', 'the token is never printed')
  t.match(withToken.out, '> authorization: Bearer <token>\n', 'it was sent, and shown replaced')

  const junit = await run(base, '--collection', '/items', '--format', 'junit')
  t.equal(junit.code, 1)
  t.equal(junit.out.match(/<testcase /g)?.length, RULES.length, 'one test case per rule')
  t.equal(junit.out.match(/<failure /g)?.length, 19)
  t.equal(junit.out.match(/<skipped /g)?.length, 33)
  t.match(junit.out, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="svc-conventions check" tests="58" failures="19" skipped="33"/)

  const tap = await run(base, '--collection', '/items', '--format', 'tap')
  t.match(tap.out, /^TAP version 14\n1\.\.58\nnot ok 1 - versioning\.http-1\.0: /)
  t.equal(tap.out.match(/^not ok /gm)?.length, 19)
  t.equal(tap.out.match(/ # SKIP /g)?.length, 33)

  const json = await run(base, '--collection', '/items', '--format', 'json', '--only', 'methods.not-found,methods.head')
  t.equal(json.code, 0, 'no rule fails: 0')
  t.match(JSON.parse(json.out), { baseUrl: base, writes: false, verdicts: [{ id: 'methods.not-found', verdict: 'pass' }, { id: 'methods.head', verdict: 'pass' }], leftBehind: [] })

  const skipped = await run(base, '--collection', '/items', '--format', 'json', '--skip', 'errors.problem-body', '--only', 'errors.problem-body,methods.head')
  t.strictSame(JSON.parse(skipped.out).verdicts.map((v: { id: string }) => v.id), ['methods.head'], '--skip wins over --only')
})

t.test('the command line: help, rule list, errors with exit code 2', async t => {
  const { base } = await startFixture(t)
  const closed = await new Promise<number>(resolve => { const s = createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as AddressInfo).port; s.close(() => { resolve(p) }) }) })
  const cases: Array<[string, string[], Record<string, string>, RegExp]> = [
    ['no base URL', [], {}, /no base URL/],
    ['an unknown option', [base, '--bogus'], {}, /Unknown option '--bogus'/],
    ['an unknown format', [base, '--format', 'xml'], {}, /--format must be text, json, junit or tap/],
    ['an unknown rule', [base, '--only', 'no.such-rule'], {}, /no rule "no\.such-rule"/],
    ['a budget that is not a number', [base, '--max-requests', 'many'], {}, /--max-requests must be a whole number/],
    ['a token file that is not there', [base, '--token-file', '/nowhere/token'], {}, /cannot read the token file \/nowhere\/token/],
    ['a limited token file that is not there', [base, '--limited-token-file', '/nowhere/limited'], {}, /cannot read the limited token file \/nowhere\/limited/],
    ['both ways to give the limited token', [base, '--limited-token', 'a', '--limited-token-file', 'b'], {}, /--limited-token or --limited-token-file, not both/],
    ['no document and no collection', [base], {}, /answers no OpenAPI document: name one with --openapi, or the collections with --collection/],
    ['an unreachable service', [`http://127.0.0.1:${closed}`, '--collection', '/items'], {}, /cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/],
    ['TLS to a plain HTTP port', [base.replace('http:', 'https:'), '--collection', '/items'], {}, /TLS error talking to https:\/\/127\.0\.0\.1:\d+/],
    ['a wrong token', [base, '--collection', '/private', '--token-file', 'token.txt'], { 'token.txt': 'not-the-fixture-token\n' }, /the token was refused: GET \/private answered 401; check --token/]
  ]
  for (const [name, argv, files, message] of cases) {
    const io = capture(files)
    t.equal(await checkCommand(argv, io), 2, name)
    t.match(io.stderr[0], message, name)
    t.strictSame(io.stdout, [], `${name}: no report`)
    t.notMatch(io.stderr.join('\n'), 'not-the-fixture-token', `${name}: no token shown`)
  }
  const right = capture({ 'token.txt': 'fixture-token\n' })
  t.equal(await checkCommand([base, '--collection', '/private', '--token-file', 'token.txt', '--only', 'methods.head'], right), 0, 'the right token passes the probe')

  const listed = capture()
  t.equal(await checkCommand(['--list'], listed), 0)
  t.equal(listed.stdout[0]?.split('\n').length, RULES.length, 'one line per rule')
  t.match(listed.stdout[0], /\nwebhooks\.consumers +Webhook consumer endpoints: .*\[not observable from outside: /)
  // The package's bin dispatches `check` to checkCommand.
  const { binCommand } = await import('../../bin/lint.js')
  const help = capture()
  t.equal(await binCommand(['check', '--help'], help), 0)
  t.strictSame(help.stdout, [CHECK_HELP])
  for (const option of ['--token', '--token-file', '--limited-token', '--limited-token-file', '--origin', '--openapi', '--collection', '--writes', '--only', '--skip', '--max-requests', '--concurrency', '--format', '--list']) t.match(CHECK_HELP, `\n  ${option} `, option)
})

t.test('safe on a real service: the budget holds, no redirect is followed off the host', async t => {
  let elsewhere = 0
  const other = createServer((_req, res) => { elsewhere++; res.end('{}') })
  await new Promise<void>(resolve => { other.listen(0, '127.0.0.1', resolve) })
  t.teardown(() => { other.close() })
  const { base } = await startFixture(t, `http://127.0.0.1:${(other.address() as AddressInfo).port}/openapi.json`)
  await t.rejects(check({ baseUrl: base, openapi: `${base}/moved.json` }), new CheckError('document', `${base}/moved.json answered 302, not an OpenAPI document`))
  t.equal(elsewhere, 0, 'the redirect to another host was not followed')

  for (const max of [3, 12]) {
    const result = await check({ baseUrl: base, collections: ['/items'], maxRequests: max, concurrency: 1 })
    t.equal(result.requests, max, `--max-requests ${max}: exactly that many sent`)
    const spent = result.verdicts.filter(v => v.reason === `the request budget (--max-requests ${max}) is spent`)
    t.ok(spent.length > 0, `--max-requests ${max}: the rules it could not afford are not checked, saying why`)
    t.ok(spent.every(v => v.verdict === 'not checked'))
  }
})

t.test('check/ uses nothing of the suite\'s runtime', async t => {
  const dir = join(import.meta.dirname, '..', '..', 'check')
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter(f => f.endsWith('.ts'))
  t.ok(files.length > 10)
  for (const file of files) {
    const text = readFileSync(join(dir, file), 'utf8')
    const imports = [...text.matchAll(/(?:from|import\()\s*'([^']+)'/g)].map(m => m[1] as string)
    const depth = file.split('/').length - 1
    const outside = imports.filter(s => s.startsWith('.') && s.split('/').filter(p => p === '..').length > depth)
    t.strictSame(outside, [], `${file}: relative imports stay in check/`)
    t.strictSame(imports.filter(s => !s.startsWith('.') && !s.startsWith('node:') && !['undici', 'yaml', 'svc-conventions/package.json'].includes(s)), [], `${file}: only Node, undici and yaml`)
  }
})

t.test('auth.forbidden: a limited token refused as unknown fails; without one the rule is not checked', async t => {
  const { base } = await startFixture(t)
  const io = capture({ 'limited.txt': 'limited-secret\n' }, { SVC_CHECK_TOKEN: 'fixture-token' })
  t.equal(await checkCommand([base, '--collection', '/private', '--limited-token-file', 'limited.txt', '--only', 'auth.forbidden', '--format', 'json'], io), 1)
  const [verdict] = (JSON.parse(io.stdout[0] ?? '{}') as { verdicts: Array<{ verdict: string, reason: string, exchange: { request: { headers: Record<string, string> } } }> }).verdicts
  t.match(verdict, { verdict: 'fail', reason: /refused as unauthenticated \(401\)/ })
  t.equal(verdict?.exchange.request.headers.authorization, 'Bearer <limited token>', 'the limited token is sent, never shown')
  t.notMatch(io.stdout.join('\n'), /limited-secret|fixture-token/)

  const without = await check({ baseUrl: base, collections: ['/private'], token: 'fixture-token', only: ['auth.forbidden'] })
  t.match(without.verdicts, [{ verdict: 'not checked', reason: /needs --limited-token/ }])
  // /items lets anyone read: with --writes the POST is tried, and {} is refused as invalid, not forbidden.
  const readable = await check({ baseUrl: base, collections: ['/items'], limitedToken: 'limited', writes: true, only: ['auth.forbidden'] })
  t.match(readable.verdicts, [{ verdict: 'not applicable', reason: /may read every collection and create/ }])
})

t.test('naming.enums reads the bodies a document describes; naming.plural-arrays the answers', async t => {
  const { base } = await startFixture(t)
  const body = (schema: Record<string, unknown>): Record<string, unknown> => ({ content: { 'application/json': { schema } } })
  const docWith = (status: Record<string, unknown>): Record<string, unknown> => ({
    openapi: '3.1.0',
    paths: {
      '/items': {
        get: { parameters: [{ name: 'ordering', in: 'query', schema: { enum: ['name', '-name'] } }], responses: { 200: body({ $ref: '#/components/schemas/Item' }) } },
        post: { requestBody: body({ properties: { status, ordering: { enum: ['name'] }, source: { enum: ['body', 'query'] } } }) }
      }
    },
    components: { schemas: { Item: { properties: { kind: { enum: ['PURCHASE_ORDER', 'INVOICE_2'] }, self: { $ref: '#/components/schemas/Item' } } } } }
  })
  const cases: Array<[string, Record<string, unknown>, string, RegExp | undefined]> = [
    ['upper-case values; sort keys, a search body\'s ordering and the context source aside', docWith({ enum: ['ACTIVE', 'ON_HOLD'] }), 'pass', undefined],
    ['a lower-case value', docWith({ enum: ['ACTIVE', 'on-hold'] }), 'fail', /the enum value "on-hold" at #\/paths\/~1items\/post\/requestBody\/content\/application~1json\/schema\/properties\/status\/enum/],
    ['no enum in any body', { openapi: '3.1.0', paths: { '/items': { get: { responses: {} } } } }, 'not applicable', /no body with an enum/],
    ['no paths', { openapi: '3.1.0' }, 'not applicable', /no body with an enum/]
  ]
  // A webhook consumer's payload is its producer's (Webhook consumer endpoints): its enums, and
  // those of any operation marked x-internal, are not the service's to name.
  const withProducers = (more: Record<string, unknown>): Record<string, unknown> => {
    const doc = docWith({ enum: ['ACTIVE'] })
    Object.assign(doc.paths as object, {
      '/_webhooks/scanner/document-scanned': { post: { 'x-internal': true, requestBody: body({ properties: { eventType: { enum: ['document.scanned'] } } }) } },
      '/api/_webhooks/scanner/document-failed': { post: { requestBody: body({ properties: { eventType: { enum: ['document.failed'] } } }) } },
      '/internal/sync': { post: { 'x-internal': true, requestBody: body({ properties: { mode: { enum: ['full-sync'] } } }) }, ...more },
      '/not-a-path-item': 7
    })
    return doc
  }
  cases.push(
    ['webhook consumers and x-internal operations left out', withProducers({}), 'pass', undefined],
    ['an operation beside an x-internal one is read', withProducers({ put: { requestBody: body({ properties: { mode: { enum: ['partial'] } } }) } }), 'fail', /the enum value "partial" at #\/paths\/~1internal~1sync\/put\//]
  )
  for (const [name, openapi, verdict, reason] of cases) {
    const result = await check({ baseUrl: base, openapi, collections: ['/items'], only: ['naming.enums'] })
    t.match(result.verdicts, [{ id: 'naming.enums', verdict, ...(reason === undefined ? {} : { reason }) }], name)
  }
  const noDoc = await check({ baseUrl: base, collections: ['/items'], only: ['naming.enums', 'naming.plural-arrays'] })
  t.match(noDoc.verdicts, [{ verdict: 'fail', reason: 'the array "tag" has a singular name' }, { verdict: 'not applicable', reason: /no OpenAPI document/ }])

  const names: Array<[string, boolean]> = [
    ['results', true], ['operations', true], ['context', true], ['data', true], ['children', true], ['tags', true],
    ['tag', false], ['status', false], ['address', false], ['item', false], ['relatedPeople', true], ['itemList', false]
  ]
  for (const [name, plural] of names) t.equal(pluralName(name), plural, name)
})
