import t from 'tap'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { alive, call, ctrlCWhileServing, kill, npm, projectEnv, run, start, stop, type Answer } from './helper.js'

// The initializer as a user gets it before the suite is published: from the packed tarball of
// this repository, taking the suite from that tarball too (--from). Each generated project is
// installed (peers from npm's cache), passes its own `npm test`, starts with `npm start`, and
// answers as the convention says. One pack and one install per project keep this file short;
// the two projects are made side by side.
const root = join(import.meta.dirname, '..', '..')
const USER_AGENT = { 'user-agent': 'create-test/1' }

t.setTimeout(900_000)

const work = mkdtempSync(join(tmpdir(), 'svc-create-'))
t.teardown(() => { rmSync(work, { recursive: true, force: true }) })

/** The tarball, packed once; dist/ is built before the tests run (.taprc `before`). */
async function pack (): Promise<string> {
  const { stdout } = await run(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: root, maxBuffer: 64 * 1024 * 1024 })
  const packed = (JSON.parse(stdout) as Array<{ filename: string }>)[0]
  if (packed === undefined) throw new Error('npm pack wrote nothing')
  return join(work, packed.filename)
}

interface Made { dir: string, output: string }

/** Runs the initializer of the extracted tarball in `work`, which installs the project. */
async function make (initializer: string, tarball: string, args: string[]): Promise<Made> {
  const { stdout } = await run(process.execPath, [initializer, ...args, '--from', tarball], { cwd: work, env: projectEnv(), maxBuffer: 16 * 1024 * 1024 })
  return { dir: join(work, args[0] as string), output: stdout }
}

async function npmTest (dir: string): Promise<string> {
  return await run(npm, ['test'], { cwd: dir, env: projectEnv(), maxBuffer: 16 * 1024 * 1024 }).then(
    ({ stdout }) => stdout,
    (err: { stdout?: string, stderr?: string }) => { throw new Error(`npm test failed in ${dir}:\n${err.stdout ?? ''}\n${err.stderr ?? ''}`) })
}

const json = (answer: Answer): Record<string, unknown> => JSON.parse(answer.body) as Record<string, unknown>

t.test('npm init svc-conventions from the packed tarball: TypeScript (ESM) and JavaScript (CommonJS)', async (t) => {
  const tarball = await pack()
  const extracted = join(work, 'extracted')
  mkdirSync(extracted)
  await run('tar', ['-xzf', tarball, '-C', extracted])
  const initializer = join(extracted, 'package', 'create-svc-conventions', 'bin.js')
  t.ok(existsSync(initializer), 'the tarball carries the initializer')

  const [ts, js] = await Promise.all([
    make(initializer, tarball, ['ts-service']),
    make(initializer, tarball, ['js-service', '--javascript', '--module', 'cjs', '--resource', 'orders', 'item:string', 'quantity:integer', 'placedDate:date?'])
  ])
  t.match(ts.output, /Next:\n {2}cd ts-service\n {2}npm test\n {2}npm start/, 'it says what to run next')
  t.ok(existsSync(join(ts.dir, 'node_modules', 'svc-conventions', 'dist', 'index.js')), 'the suite is installed from the tarball')
  t.equal(JSON.parse(readFileSync(join(js.dir, 'package.json'), 'utf8')).type, 'commonjs')
  t.ok(existsSync(join(js.dir, 'resources', 'orders.js')) && existsSync(join(ts.dir, 'resources', 'books.ts')))

  const [tsTest, jsTest] = await Promise.all([npmTest(ts.dir), npmTest(js.dir)])
  // `node --test` reports as TAP on Node 20 and 22 when not on a terminal (`# pass 8`), in its
  // spec format on later ones (`ℹ pass 8`).
  for (const [name, out] of [['TypeScript', tsTest], ['JavaScript', jsTest]]) {
    t.match(out, /^[#ℹ] pass [1-9]/m, `${name}: its own tests pass`)
    t.match(out, /^[#ℹ] fail 0$/m, `${name}: none fails`)
  }

  // The suite's bin, as installed in the project, writes a service too.
  const again = await run(join(ts.dir, 'node_modules', '.bin', 'svc-conventions'), ['new', join(work, 'from-bin'), '--javascript', '--no-install'], { cwd: work, env: projectEnv() })
  t.match(again.stdout, /Wrote a JavaScript service/)
  t.ok(existsSync(join(work, 'from-bin', 'app.js')), 'svc-conventions new wrote app.js')

  for (const [made, collection, entity] of [[ts, 'books', { title: 'Dune' }], [js, 'orders', { item: 'pen', quantity: 2 }]] as const) {
    await t.test(`${made.dir}: npm start, then its resource answers as the convention says`, async (t) => {
      const token = (await run(npm, ['run', '-s', 'token'], { cwd: made.dir, env: projectEnv() })).stdout.trim()
      t.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'npm run token prints a JWT alone')
      const server = await start(made.dir, projectEnv({ PORT: '0' }))
      t.teardown(() => { kill(server) })
      const auth = { ...USER_AGENT, authorization: `Bearer ${token}` }

      const created = await call(server.port, 'POST', `/v1/${collection}`, auth, entity)
      t.equal(created.status, 201, created.body)
      const page = await call(server.port, 'GET', `/v1/${collection}?limit=5`, auth)
      t.equal(page.status, 200)
      t.match(page.headers['content-type'], /^application\/json/)
      const { results, paging } = json(page) as { results: unknown[], paging: unknown }
      t.equal(results.length, 1, 'the collection envelope: results')
      t.match(results[0], { ...entity, id: (json(created) as { id: string }).id })
      t.strictSame(paging, { limit: 5, next: null, previous: null }, 'the collection envelope: paging')

      const bad = await call(server.port, 'POST', `/v1/${collection}`, auth, { ...entity, colour: 'red' })
      t.equal(bad.status, 400)
      t.match(bad.headers['content-type'], /^application\/problem\+json/)
      t.match(json(bad), { title: 'Invalid Data', status: 400, requestId: String })
      const { 'user-agent': _, ...noAgent } = auth
      const refused = await call(server.port, 'POST', `/v1/${collection}`, noAgent, entity)
      t.equal(refused.status, 403, 'a POST without User-Agent')
      t.match(refused.headers['content-type'], /^application\/problem\+json/)
      t.match(json(refused), { status: 403, requestId: String })
      // The suite's conformance check, where the packed suite has it, over every rule it can probe.
      const bin = join(made.dir, 'node_modules', '.bin', 'svc-conventions')
      const hasCheck = / {2}check /.test((await run(bin, ['--help'], { env: projectEnv() })).stdout)
      await t.test('svc-conventions check --writes finds no failing rule', { skip: hasCheck ? false : 'the packed suite has no check command' }, async (t) => {
        const checked = await run(bin, ['check', `http://127.0.0.1:${server.port}`, '--token', token, '--writes'], { cwd: made.dir, env: projectEnv() })
          .then(({ stdout }) => ({ code: 0, out: stdout }), (err: { code?: number, stdout?: string }) => ({ code: err.code, out: err.stdout ?? '' }))
        t.equal(checked.code, 0, 'exit code 0', { report: checked.out })
        t.match(checked.out, / 0 fail/)
      })
      if (made === ts) {
        t.equal(await stop(server), 0, 'SIGTERM to npm stops it cleanly')
        t.match(server.output(), /"msg":"stopping"/)
      } else {
        const { status, code } = await ctrlCWhileServing(server, `/v1/${collection}`, auth, entity)
        t.equal(status, 201, 'one Ctrl-C (npm\'s SIGINT and the terminal\'s): the request in flight is answered')
        t.equal(code, 0, 'and the service stops cleanly')
        // Written when logged: lines held for a background write come out of order, or not at
        // all, when the process exits.
        t.match(server.output(), /"msg":"stopping"[^]*"reqId":"held-by-its-body"[^\n]*"msg":"request completed"/, 'the log has that answer, after "stopping"')
      }
      t.notOk(alive(server.pid), 'the service has ended with npm')
    })
  }

  await t.test('a production start without its secrets, or with a hop count for TRUST_PROXY, is refused', async (t) => {
    const refused = await run(npm, ['start'], { cwd: ts.dir, env: projectEnv({ NODE_ENV: 'production', PORT: '0', TRUST_PROXY: '1' }) }).then(() => undefined, (err: { code?: number, stderr?: string }) => err)
    t.not(refused, undefined, 'npm start fails')
    t.match(refused?.stderr, /AUTH_JWT_SECRET is required when NODE_ENV=production[^]*CURSOR_SECRET is required/)
    t.match(refused?.stderr, /- TRUST_PROXY: a hop count is not taken; give the proxies' addresses or ranges, such as 10\.0\.0\.0\/8 \(got "1"\)/, 'a hop count, which Fastify would take and then believe no proxy for')
  })
})
