import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'

// The heavy dependencies are loaded by the parts that use them, and only when they are used:
// importing the suite, or any of its subpaths, loads none of them. A child process imports the
// package by its name (as an application does), with loader hooks recording every module
// resolved, ES modules and CommonJS alike (require.cache).

const HEAVY = ['pg', 'ioredis', '@electric-sql/pglite', '@fastify/swagger-ui', 'undici']
// Each case starts Node on the built package: slow on a busy machine.
t.setTimeout(600_000)
const run = promisify(execFile)
const hooks = pathToFileURL(join(import.meta.dirname, 'record-loads.mjs')).href

/** The package names of the modules `script` loads after the hooks are in place. */
async function loaded (t: Test, script: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-loads-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const file = join(dir, 'loads.txt')
  const code = `
import { register, createRequire } from 'node:module'
import { appendFileSync } from 'node:fs'
register(${JSON.stringify(hooks)}, { data: { file: ${JSON.stringify(file)} } })
${script}
appendFileSync(${JSON.stringify(file)}, Object.keys(createRequire(import.meta.url).cache).join('\\n') + '\\n')
`
  // Plain Node, without the tests' loader and source condition: the package as installed
  // (dist/, built before the tests run), and no TypeScript to compile at each start.
  await run(process.execPath, ['--input-type=module', '-e', code], { cwd: join(import.meta.dirname, '..', '..') })
  const names = readFileSync(file, 'utf8').split('\n').flatMap((line) => {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(decodeURIComponent(line))
    return m === null ? [] : [m[1] as string]
  })
  return [...new Set(names)].filter((name) => HEAVY.includes(name)).sort()
}

const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { exports: Record<string, unknown> }
const subpaths = Object.keys(pkg.exports).filter((key) => key !== './package.json').map((key) => key === '.' ? 'svc-conventions' : `svc-conventions/${key.slice(2)}`)

t.test('importing the suite, every subpath and the root, loads none of the heavy dependencies', async (t) => {
  t.ok(subpaths.length >= 19, `${subpaths.length} entries`)
  const imports = subpaths.map((s) => `await import(${JSON.stringify(s)})`).join('\n')
  t.strictSame(await loaded(t, imports), [])
})

t.test('each is loaded when its part is used, and only then', async (t) => {
  const cases: Array<[string, string, string[]]> = [
    ['an embedded store', "const { createStore } = await import('svc-conventions/store'); const s = createStore({ dataDir: 'memory' }); await s.ready(); await s.close()", ['@electric-sql/pglite']],
    ['a server store', "const { createStore } = await import('svc-conventions/store'); const s = createStore({ databaseUrl: 'postgres://nobody@127.0.0.1:1/none' }); await s.close()", ['pg']],
    ['rate limits in Redis', `const { default: Fastify } = await import('fastify'); const { problem, rateLimit } = await import('svc-conventions')
const app = Fastify(); await app.register(problem); await app.register(rateLimit, { redis: 'redis://127.0.0.1:1' }); await app.close()`, ['ioredis']],
    ['rate limits in memory', `const { default: Fastify } = await import('fastify'); const { problem, rateLimit } = await import('svc-conventions')
const app = Fastify(); await app.register(problem); await app.register(rateLimit); await app.close()`, []],
    ['the docs page', `const { default: Fastify } = await import('fastify'); const { openapi, docs } = await import('svc-conventions')
const app = Fastify(); await app.register(openapi, { info: { title: 't', version: '1' } }); await app.register(docs); await app.ready(); await app.close()`, ['@fastify/swagger-ui']],
    ['a downstream client, made', `const { createDownstream } = await import('svc-conventions/downstream')
const c = createDownstream({ service: { id: '0f8b2c4e-6a1d-4e3b-9c5f-7d2e1a0b3c4d', name: 'a' }, userAgent: { product: 'a', version: 1 } }); await c.close()`, []],
    ['a downstream call', `const { createDownstream } = await import('svc-conventions/downstream')
const c = createDownstream({ service: { id: '0f8b2c4e-6a1d-4e3b-9c5f-7d2e1a0b3c4d', name: 'a' }, userAgent: { product: 'a', version: 1 }, retry: false })
await c.get('http://127.0.0.1:1/').catch(() => {}); await c.close()`, ['undici']]
  ]
  const found = await Promise.all(cases.map(async ([, script]) => await loaded(t, script)))
  cases.forEach(([name, , expected], i) => { t.strictSame(found[i], expected, name) })
})
