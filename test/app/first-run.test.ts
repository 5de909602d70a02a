import t, { type Test } from 'tap'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { signToken } from '../../plugins/auth/sign.js'
import { toolEnv } from '../support/child-env.js'

// Each test starts the service as a user does, several times: minutes on a busy machine.
t.setTimeout(600_000)

// The way in, as a new user meets it: the built service (dist/, made at install; tap's `before`
// keeps it current) started with the command line of `npm start`, and `npm run token`. Timings are
// printed as comments, never asserted: a loaded machine would fail any bound. The service runs in
// a terminal's environment (toolEnv), without tap's loader and coverage: what it runs is dist/,
// not the sources, so its coverage is none of the gate's (the plugins' own tests cover them).

const root = join(import.meta.dirname, '..', '..')
// package.json's start script: the build check, then the server in the same process.
const startArgs = [join(root, 'scripts', 'build.js'), '--if-needed', '--run', join(root, 'dist', 'server.js')]
const run = promisify(execFile)

function tempDir (t: Test, prefix = 'svc-first-run-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

interface Running {
  child: ChildProcess
  /** The JSON log lines written so far. */
  lines: Array<Record<string, unknown>>
  stderr: () => string
  /** The start-up line, once the service listens. */
  ready: Promise<Record<string, unknown>>
  exited: Promise<number | null>
}

function start (t: Test, env: Record<string, string>): Running {
  const child = spawn(process.execPath, startArgs, {
    cwd: root,
    env: toolEnv({ NODE_ENV: '', PORT: '0', LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT: '10000', ...env }),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  const lines: Array<Record<string, unknown>> = []
  let out = ''
  let err = ''
  child.stderr?.on('data', (chunk) => { err += String(chunk) })
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  const ready = new Promise<Record<string, unknown>>((resolve, reject) => {
    child.stdout?.on('data', (chunk) => {
      out += String(chunk)
      let nl
      while ((nl = out.indexOf('\n')) !== -1) {
        const line = JSON.parse(out.slice(0, nl)) as Record<string, unknown>
        out = out.slice(nl + 1)
        lines.push(line)
        if (typeof line.msg === 'string' && line.msg.startsWith('Listening at ')) resolve(line)
      }
    })
    exited.then((code) => { reject(new Error(`the service exited with ${String(code)} before listening: ${err}`)) }, reject)
  })
  ready.catch(() => {})
  return { child, lines, stderr: () => err, ready, exited }
}

t.test('npm run -s token prints the token alone, so TOKEN=$(npm run -s token) works; --help prints the usage', async (t) => {
  const started = Date.now()
  // npm itself is a tool (toolEnv); bin/token.ts is not among the sources coverage is kept for.
  const { stdout } = await run('npm', ['run', '-s', 'token'], { cwd: root, env: toolEnv({ LOG_LEVEL: 'silent' }) })
  t.comment(`npm run token: ${Date.now() - started} ms`)
  t.match(stdout, /^eyJ[\w-]+\.[\w-]+\.[\w-]+\n$/, 'one line: the token')
  const claims = JSON.parse(Buffer.from(stdout.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>
  t.match(claims, { sub: 'dev-user', scope: 'authors:read authors:write documents:read documents:write webhooks:read webhooks:write' })

  const own = await run('npm', ['run', '-s', 'token', '--', '--sub', 'alice', '--scope', 'authors:read'], { cwd: root, env: toolEnv() })
  t.match(JSON.parse(Buffer.from(own.stdout.split('.')[1] as string, 'base64url').toString()), { sub: 'alice', scope: 'authors:read' })

  const help = await run('npm', ['run', '-s', 'token', '--', '--help'], { cwd: root, env: toolEnv() })
  t.match(help.stdout, /^usage: npm run token -- \[--sub ID\] \[--scope "a b"\] \[--expires-in 1h\]\n/)
  t.match(help.stdout, /TOKEN=\$\(npm run -s token\)/)
  const bogus = await run('npm', ['run', '-s', 'token', '--', '--bogus'], { cwd: root, env: toolEnv() }).then(() => undefined, (err: { code: number, stdout: string, stderr: string }) => err)
  t.match(bogus, { stderr: /Unknown option '--bogus'\n\(npm run token -- --help for the options\)/ }, 'a bad option: a message on stderr')
  t.notMatch(bogus?.stdout, /eyJ/, 'and no token')
})

t.test('npm start: one start-up line says where, the docs, the store and how to get a token; nothing is left in the temp folder', async (t) => {
  const temp = tempDir(t, 'svc-tmpdir-')
  const dataDir = join(tempDir(t), 'data')
  const started = Date.now()
  const service = start(t, { DATA_DIR: dataDir, TMPDIR: temp })
  const line = await service.ready
  t.comment(`first start on an empty data directory: ${Date.now() - started} ms to the start-up line`)
  const url = line.url as string
  t.match(line, {
    level: 30,
    url: /^http:\/\/127\.0\.0\.1:\d+$/,
    docs: `${url}/docs`,
    store: `PGlite in ${dataDir}`,
    msg: `Listening at ${url} · API docs at ${url}/docs · store: PGlite in ${dataDir} · a token: npm run token`
  })
  t.equal((await fetch(`${url}/health`)).status, 200)
  service.child.kill('SIGTERM')
  t.equal(await service.exited, 0, 'a clean stop')
  t.ok(service.lines.some((l) => l.msg === 'shutting down: draining requests in flight'))
  t.strictSame(readdirSync(temp), [], 'the temp folder is as it was')
  t.notOk(existsSync(join(dataDir, 'svc-conventions.lock')), 'the data directory is given back')

  const restarted = Date.now()
  const again = start(t, { DATA_DIR: dataDir, TMPDIR: temp })
  await again.ready
  t.comment(`restart: ${Date.now() - restarted} ms to the start-up line`)
  again.child.kill('SIGINT')
  t.equal(await again.exited, 0)
  t.strictSame(readdirSync(temp), [])
})

t.test('a second process on a data directory in use refuses to start, naming it and the holder; a dead holder\'s lock is taken over', async (t) => {
  const dataDir = join(tempDir(t), 'data')
  const first = start(t, { DATA_DIR: dataDir })
  await first.ready
  const second = start(t, { DATA_DIR: dataDir })
  t.equal(await second.exited, 1, 'exit 1')
  t.equal(second.stderr(), `The data directory ${dataDir} is in use by process ${first.child.pid as number}: stop it, or use another data directory.\n`)
  t.strictSame(second.lines, [], 'it never listened')

  first.child.kill('SIGKILL')
  await first.exited
  t.ok(existsSync(join(dataDir, 'svc-conventions.lock')), 'a killed process leaves its lock')
  const third = start(t, { DATA_DIR: dataDir })
  const line = await third.ready
  t.equal((await fetch(`${line.url as string}/health`)).status, 200, 'the stale lock was taken over')
  third.child.kill('SIGTERM')
  t.equal(await third.exited, 0)
})

t.test('a stop that hangs ends with exit 1 after SHUTDOWN_TIMEOUT', async (t) => {
  const secret = 'first-run-secret-that-is-long-enough-0123456789'
  const service = start(t, { DATA_DIR: 'memory', SHUTDOWN_TIMEOUT: '500', AUTH_JWT_SECRET: secret })
  const line = await service.ready
  const { port } = new URL(line.url as string)
  // An authorized request whose body never finishes: the service waits for the body, so the
  // request is in flight and the server cannot close. (Refused at once, it would be answered.)
  const token = signToken({ secret, sub: 'first-run', scope: 'authors:write', expiresIn: '1h' })
  const socket = connect(Number(port), '127.0.0.1')
  await once(socket, 'connect')
  socket.on('error', () => {})
  t.teardown(() => socket.destroy())
  socket.write(`POST /v1/authors HTTP/1.1\r\nHost: x\r\nUser-Agent: t/1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na`)
  // Stopped once the service has the request (Fastify logs each one as it arrives), not after a
  // guessed delay: a head not yet read would be dropped as serving nothing.
  while (!service.lines.some((l) => l.msg === 'incoming request' && (l.req as { url?: string } | undefined)?.url === '/v1/authors')) {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  service.child.kill('SIGTERM')
  t.equal(await service.exited, 1, 'forced')
  t.ok(service.lines.some((l) => l.msg === 'shutdown: requests in flight or the store did not finish within 500 ms (SHUTDOWN_TIMEOUT); exiting anyway'))
})

t.test('a connection holding part of a request\'s head does not hold up the stop', async (t) => {
  // Long enough that waiting on that connection would end in the forced exit, not in exit 0.
  const service = start(t, { DATA_DIR: 'memory', SHUTDOWN_TIMEOUT: '60000' })
  const line = await service.ready
  const { port } = new URL(line.url as string)
  const socket = connect(Number(port), '127.0.0.1')
  await once(socket, 'connect')
  socket.on('error', () => {})
  t.teardown(() => socket.destroy())
  // Closed by the server, with a reset or not (events.once would reject on the reset's error).
  const dropped = new Promise((resolve) => socket.once('close', resolve))
  // A request's first lines, the rest never sent (a stalled client): no request reaches the service.
  await new Promise((resolve) => socket.write('GET /health HTTP/1.1\r\nHost: x\r\n', resolve))
  service.child.kill('SIGTERM')
  t.equal(await service.exited, 0, 'a clean exit, not the forced one')
  await dropped
  t.notOk(service.lines.some((l) => String(l.msg).includes('SHUTDOWN_TIMEOUT')), 'no forced exit logged')
})

t.test('a database that cannot be reached stops the start with the cause, and no password', async (t) => {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  const service = start(t, { DATABASE_URL: `postgres://svc:hunter2-secret@127.0.0.1:${port}/app` })
  t.equal(await service.exited, 1)
  t.equal(service.stderr(), `Nothing accepts connections at 127.0.0.1:${port}: check that the PostgreSQL server is running, and the host and port in DATABASE_URL.\n`)
  t.notMatch(JSON.stringify(service.lines), 'hunter2')
})

t.test('on a terminal in development the log is for people (pino-pretty); elsewhere JSON', { skip: existsSync('/usr/bin/script') ? false : 'no script(1) to give the service a terminal' }, async (t) => {
  const dataDir = join(tempDir(t), 'data')
  // script(1) runs the service on a pseudo-terminal, through $SHELL -c. `exec` makes the
  // service the terminal's foreground process itself: a shell left waiting in between (dash
  // does not replace itself) would die of the Ctrl-C below and report 130 for the service.
  const child = spawn('script', ['-qfec', `exec ${process.execPath} ${startArgs.join(' ')}`, '/dev/null'], {
    cwd: root,
    env: toolEnv({ SHELL: '/bin/sh', NODE_ENV: '', NO_COLOR: '1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info' }),
    stdio: ['pipe', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let out = ''
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += String(chunk)
      if (/Listening at /.test(out)) resolve()
    })
    child.once('exit', () => { reject(new Error(`exited before listening: ${out}`)) })
  })
  t.match(out, /\[\d\d:\d\d:\d\d\.\d{3}\] INFO: Listening at http:\/\/127\.0\.0\.1:\d+ · API docs at /, 'a readable line')
  t.notMatch(out, /^\{"level"/m, 'no JSON')
  // SIGINT through the terminal, as Ctrl-C.
  child.stdin.write('\x03')
  const [code] = await once(child, 'exit') as [number | null]
  t.equal(code, 0)
})
