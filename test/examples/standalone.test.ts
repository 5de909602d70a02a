import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import t, { type Test } from 'tap'

// The examples run alone as their header comments say (the main guard), not only when imported.
const root = join(import.meta.dirname, '..', '..')
// The tests' own TypeScript loader (types erased): the children's coverage maps like the tests'.
const loader = join(root, 'scripts', 'strip-types.js')

async function startExample (t: Test, file: string, env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, ['--conditions=svc-conventions-source', '--import', loader, join(root, 'examples', file)], {
    cwd: root,
    env: { ...process.env, ...env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM')
      await once(child, 'exit')
    }
  })
  let out = ''
  for await (const chunk of child.stdout) {
    out += String(chunk)
    const address = /Server listening at (http:\/\/[^"\s]+)/.exec(out)?.[1]
    if (address !== undefined) return address
  }
  throw new Error(`${file} exited before listening: ${out}`)
}

t.test('examples/five-minute.ts listens alone and answers problems', async (t) => {
  const base = await startExample(t, 'five-minute.ts', { AUTH_JWT_SECRET: 'a test secret of at least thirty-two bytes' })
  const res = await fetch(`${base}/v1/orders/1`, { headers: { 'user-agent': 'standalone-test/1.0' } })
  t.equal(res.status, 401)
  t.match(res.headers.get('content-type'), /^application\/problem\+json/)
})

t.test('examples/memory-collection.ts listens alone and pages its array', async (t) => {
  const base = await startExample(t, 'memory-collection.ts', {})
  const res = await fetch(`${base}/books?limit=2&ordering=-year`)
  t.equal(res.status, 200)
  t.strictSame((await res.json() as { results: Array<{ id: string }> }).results.map(b => b.id), ['b3', 'b2'])
})
