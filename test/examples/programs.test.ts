import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { signToken } from '../../plugins/auth/sign.js'

// The whole programs that docs/plugins/jobs.md, csv.md and bulk.md print run as programs, as a
// reader saves and starts them: each listens on PORT and answers as its page says.
const root = join(import.meta.dirname, '..', '..')
const secret = 'a test secret of at least thirty-two bytes'
const ua = { 'user-agent': 'programs-test/1' }

async function run (t: Test, file: string): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', DATA_DIR: 'memory', AUTH_JWT_SECRET: secret }
  delete env.DATABASE_URL
  // The same loader flags as this test process: the TypeScript file runs as it is.
  const child = spawn(process.execPath, [...process.execArgv, join(root, 'examples', file)], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    await once(child, 'exit')
  })
  let out = ''
  let err = ''
  child.stderr.on('data', (chunk: Buffer) => { err += String(chunk) })
  return await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += String(chunk)
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (m?.[1] !== undefined) resolve(m[1])
    })
    child.once('exit', (code) => { reject(new Error(`${file} exited with ${String(code)} before listening: ${out}${err}`)) })
  })
}

t.test('examples/csv.ts', async t => {
  const base = await run(t, 'csv.ts')
  const res = await fetch(`${base}/v1/books?ordering=id`, { headers: { ...ua, accept: 'text/csv' } })
  t.equal(res.status, 200)
  t.equal(res.headers.get('content-type'), 'text/csv; charset=UTF-8')
  t.match(await res.text(), /^id,title,year,tags,author\.name,author\.country\r\nb1,Nineteen Eighty-Four,1949,classic\|dystopia,George Orwell,GB\r\n/)
  t.match(res.headers.get('link'), /rel="next"/)
})

t.test('examples/jobs.ts', async t => {
  const base = await run(t, 'jobs.ts')
  const res = await fetch(`${base}/v1/reports`, { method: 'POST', headers: { ...ua, authorization: `Bearer ${signToken({ secret, sub: 'ann', scope: 'reports:read reports:write' })}` } })
  t.equal(res.status, 202)
  const job = await res.json() as { id: string }
  t.equal(res.headers.get('link'), `</v1/jobs/${job.id}>; rel="monitor"`)
})

t.test('examples/bulk.ts', async t => {
  const base = await run(t, 'bulk.ts')
  const res = await fetch(`${base}/v1/books`, {
    method: 'PATCH',
    headers: { ...ua, 'content-type': 'application/json', authorization: `Bearer ${signToken({ secret, sub: 'ann', scope: 'books:read books:write' })}` },
    body: JSON.stringify({ operations: [{ action: 'CREATE', entity: { title: 'Dune', isbn: '9780441013593', pageCount: 412 } }] })
  })
  t.equal(res.status, 200)
  t.match(await res.json(), { status: 'SUCCEEDED', operations: [{ result: { status: 'SUCCEEDED' } }] })
})
