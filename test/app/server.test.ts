import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { connect, createServer, type AddressInfo } from 'node:net'
import { randomBytes } from 'node:crypto'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { quoteIdent } from '../../store/index.js'
import { admin, TEST_DATABASE_URL } from '../support/databases.js'

const serverTs = fileURLToPath(new URL('../../server.ts', import.meta.url))

t.test('server.ts listens, answers /health, exits 0 on SIGTERM, and says when it has stopped', async t => {
  // The same loader flags as this test process, so the TypeScript entry runs as is.
  const child = spawn(process.execPath, [...process.execArgv, serverTs], {
    env: { ...process.env, PORT: '0', DATA_DIR: 'memory', LOG_LEVEL: 'info', WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let out = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += String(chunk)
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (m?.[1] !== undefined) resolve(m[1])
    })
    child.once('exit', (code) => reject(new Error(`server exited with ${String(code)} before listening: ${out}`)))
  })
  t.match(out, /AUTH_JWT_SECRET is not set/, 'the development secret is announced as a warning')
  t.match(out, /"level":40[^\n]*WEBHOOK_ALLOW_INSECURE_TARGETS=true: webhook subscriptions may name http:\/\/ URLs/, 'so are insecure webhook targets')
  const res = await fetch(`${url}/health`)
  t.equal(res.status, 200)
  child.kill('SIGTERM')
  // 'close': the process has exited and its output is all read.
  const [code] = await once(child, 'close') as [number | null]
  t.equal(code, 0, 'a clean exit after draining')
  const messages = out.trim().split('\n').map(line => (JSON.parse(line) as { msg: string }).msg)
  t.ok(messages.includes('shutting down: draining requests in flight'))
  t.equal(messages.at(-1), 'stopped: requests in flight answered, the store closed', 'the last line says everything is closed')
})

t.test('a SIGTERM while it starts: the start ends, the store is closed, nothing listens, exit 0', { skip: TEST_DATABASE_URL === undefined ? 'needs TEST_DATABASE_URL' : false }, async t => {
  // A database of its own, reached through a proxy that holds the first connection until the
  // signal is sent: the signal comes while the store opens, whatever the machine's speed.
  const server = new URL(TEST_DATABASE_URL as string)
  const name = `stop_${process.pid}_${randomBytes(4).toString('hex')}`
  await admin(server.toString(), `CREATE DATABASE ${quoteIdent(name)}`)
  t.teardown(async () => { await admin(server.toString(), `DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`) })
  let release: () => void = () => {}
  const signalled = new Promise<void>((resolve) => { release = resolve })
  let connected: () => void = () => {}
  const held = new Promise<void>((resolve) => { connected = resolve })
  const proxy = createServer((socket) => {
    socket.pause()
    connected()
    signalled.then(() => {
      const upstream = connect(Number(server.port === '' ? 5432 : server.port), server.hostname)
      socket.pipe(upstream).pipe(socket)
      socket.resume()
      const end = (): void => { socket.destroy(); upstream.destroy() }
      socket.on('error', end).on('close', end)
      upstream.on('error', end).on('close', end)
    }, () => {})
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { proxy.close() })
  const url = new URL(server.toString())
  url.host = `127.0.0.1:${(proxy.address() as AddressInfo).port}`
  url.pathname = `/${name}`
  const child = spawn(process.execPath, [...process.execArgv, serverTs], {
    env: { ...process.env, PORT: '0', DATABASE_URL: url.toString(), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let out = ''
  child.stdout.on('data', (chunk) => { out += String(chunk) })
  await held
  child.kill('SIGTERM')
  release()
  const [code] = await once(child, 'close') as [number | null]
  t.equal(code, 0, 'a clean exit')
  const messages = out.trim().split('\n').map(line => (JSON.parse(line) as { msg: string }).msg)
  t.ok(messages.includes('shutting down: stopped while starting, before listening'), 'it says why it stops')
  t.equal(messages.at(-1), 'stopped: the store closed', 'the last line says the store is closed')
  t.notOk(messages.some(m => /Listening at|Server listening/.test(m)), 'nothing listened')
})

t.test('a SIGTERM while the service\'s modules load: taken, the start ends, exit 0', async t => {
  // A module hook holds app.ts's load until the signal is sent: the signal comes while the
  // modules load, whatever the machine's speed.
  const dir = mkdtempSync(join(tmpdir(), 'svc-server-hold-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const app = pathToFileURL(join(dirname(serverTs), 'app')).href
  const loading = join(dir, 'loading')
  const go = join(dir, 'go')
  // The hook runs where the TypeScript loader's do (scripts/strip-types.js): in the thread that
  // loads the modules where Node has synchronous hooks (it waits there, blocking that thread; a
  // signal that comes meanwhile is handled once the load goes on), else in the hooks thread.
  const held = `url === ${JSON.stringify(`${app}.ts`)} || url === ${JSON.stringify(`${app}.js`)}`
  writeFileSync(join(dir, 'hooks.mjs'), `import { existsSync, writeFileSync } from 'node:fs'
export async function load (url, context, next) {
  if (${held}) {
    writeFileSync(${JSON.stringify(loading)}, '')
    while (!existsSync(${JSON.stringify(go)})) await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return next(url, context)
}
`)
  writeFileSync(join(dir, 'hold.mjs'), `import module from 'node:module'
import { existsSync, writeFileSync } from 'node:fs'
const [major, minor, patch] = process.versions.node.split('.').map(Number)
if (module.registerHooks !== undefined && (major > 24 || (major === 24 && (minor > 13 || (minor === 13 && patch >= 1))))) {
  const cell = new Int32Array(new SharedArrayBuffer(4))
  module.registerHooks({
    load (url, context, next) {
      if (${held}) {
        writeFileSync(${JSON.stringify(loading)}, '')
        while (!existsSync(${JSON.stringify(go)})) Atomics.wait(cell, 0, 0, 10)
      }
      return next(url, context)
    }
  })
} else {
  module.register('./hooks.mjs', import.meta.url)
}
`)
  // Under tap the child also carries tap's process recorder, whose SIGTERM listener re-raises a
  // signal nothing else listens for. Where the hold leaves the child's loop free (the hooks
  // thread), the signal is handled at once, so a service whose handlers came after the load
  // ends by it and fails here; where the hold blocks the loop (synchronous hooks), the handlers
  // are set by the time it is handled, and this test shows only the clean end.
  const child = spawn(process.execPath, [...process.execArgv, '--import', join(dir, 'hold.mjs'), serverTs], {
    env: { ...process.env, PORT: '0', DATA_DIR: 'memory', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let out = ''
  child.stdout.on('data', (chunk) => { out += String(chunk) })
  // The child's exit before it reaches the hold would leave the loop waiting: it fails the test instead.
  const state = { exited: false }
  child.once('exit', () => { state.exited = true })
  while (!existsSync(loading) && !state.exited) await new Promise((resolve) => setTimeout(resolve, 10))
  t.ok(existsSync(loading), 'the load of app.ts was held')
  child.kill('SIGTERM')
  // The signal is delivered at once; its handler runs at a later turn of the child's loop, and
  // the store still has to open once the load goes on, so this pause only adds to a margin the
  // outcome does not hinge on.
  await new Promise((resolve) => setTimeout(resolve, 200))
  writeFileSync(go, '')
  const [code, signal] = await once(child, 'close') as [number | null, NodeJS.Signals | null]
  t.strictSame([code, signal], [0, null], 'a clean exit, not an end by the signal')
  const messages = out.trim().split('\n').map(line => (JSON.parse(line) as { msg: string }).msg)
  t.ok(messages.includes('shutting down: stopped while starting, before listening'), 'it says why it stops')
  t.equal(messages.at(-1), 'stopped: the store closed')
})

t.test('server.ts refuses to start with an invalid configuration', async t => {
  const child = spawn(process.execPath, [...process.execArgv, serverTs], {
    env: { ...process.env, PORT: 'not-a-port' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let err = ''
  child.stderr.on('data', (chunk) => { err += String(chunk) })
  const [code] = await once(child, 'exit') as [number | null]
  t.equal(code, 1)
  t.match(err, /Invalid configuration[\s\S]*port/)
})

t.test('in production, a missing secret stops the start before anything listens, naming each', async t => {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', PORT: '0', DATA_DIR: 'memory', AUTH_JWT_SECRET: 'a-production-secret-that-is-long-enough' }
  delete env.CURSOR_SECRET
  delete env.WEBHOOK_SECRET_SCANNER
  const child = spawn(process.execPath, [...process.execArgv, serverTs], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk) => { out += String(chunk) })
  child.stderr.on('data', (chunk) => { err += String(chunk) })
  const [code] = await once(child, 'exit') as [number | null]
  t.equal(code, 1)
  t.match(err, /WEBHOOK_SECRET_SCANNER is required when NODE_ENV=production/)
  t.match(err, /CURSOR_SECRET is required when NODE_ENV=production/)
  t.notMatch(err, /AUTH_JWT_SECRET/, 'the one given is not named')
  t.notMatch(out, /listening/i, 'nothing listened')
})

t.test('a PORT another process listens on stops the start, naming PORT, and leaves the data directory free', async t => {
  const taken = createServer()
  await new Promise<void>(resolve => taken.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { taken.close() })
  const port = (taken.address() as { port: number }).port
  const dataDir = t.testdir()
  const start = async (): Promise<{ code: number | null, err: string }> => {
    const child = spawn(process.execPath, [...process.execArgv, serverTs], {
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir },
      stdio: ['ignore', 'ignore', 'pipe']
    })
    let err = ''
    child.stderr.on('data', (chunk) => { err += String(chunk) })
    const [code] = await once(child, 'close') as [number | null]
    return { code, err }
  }
  const first = await start()
  t.equal(first.code, 1)
  t.match(first.err, new RegExp(`^PORT=${port}: another process already listens on 127\\.0\\.0\\.1:${port}; set PORT to a free port`, 'm'))
  t.notMatch(first.err, /EADDRINUSE|\n\s+at /, 'neither Node\'s code nor a stack')
  t.notOk(existsSync(join(dataDir, 'svc-conventions.lock')), 'the store was closed: its lock is gone')
})
