import t from 'tap'
import http from 'node:http'
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { SECRET, headers } from '../faults/helper.js'
import { alive } from '../support/processes.js'
import { toolEnv } from '../support/child-env.js'

// `npm start` as a container or a terminal runs it: npm, its shell, the service. A stop sent to
// npm alone (`docker stop` on a container whose command is `npm start`) must reach the service
// and drain it, and one Ctrl-C, which reaches the service twice (from the terminal and from npm),
// must drain it once, not force it out. dist/ is built before the tests run.

const root = fileURLToPath(new URL('../..', import.meta.url))
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

interface Started { npm: ChildProcess, pid: number, port: number, output: () => string, exit: Promise<number | null> }

/** `npm start` in its own process group, resolved once the service logs where it listens. */
async function start (t: Tap.Test): Promise<Started> {
  const child = spawn(npm, ['start'], {
    cwd: root,
    detached: true,
    env: toolEnv({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: 'memory', LOG_LEVEL: 'debug', AUTH_JWT_SECRET: SECRET }),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  let err = ''
  child.stderr?.on('data', (chunk: Buffer) => { err += chunk.toString() })
  // 'close': the process has exited and its output is all read.
  const exit = new Promise<number | null>((resolve) => { child.once('close', (code) => { resolve(code) }) })
  t.teardown(() => {
    try { process.kill(-(child.pid as number), 'SIGKILL') } catch {}
  })
  const [pid, port] = await new Promise<[number, number]>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const m = /"pid":(\d+)[^\n]*Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
      if (m !== null) resolve([Number(m[1]), Number(m[2])])
    })
    child.once('exit', (code) => { reject(new Error(`npm start exited with ${String(code)}:\n${out}${err}`)) })
  })
  return { npm: child, pid, port, output: () => out, exit }
}

/** Resolves once the service's log has a line matching `re`; throws once npm's output has ended without one. */
async function logged (s: Started, re: RegExp): Promise<void> {
  while (!re.test(s.output())) {
    if (s.npm.stdout?.readableEnded === true) throw new Error(`npm start ended before logging ${String(re)}:\n${s.output()}`)
    await new Promise<void>((resolve) => {
      const next = (): void => {
        s.npm.stdout?.off('data', next).off('end', next)
        resolve()
      }
      s.npm.stdout?.on('data', next).on('end', next)
    })
  }
}

/** The service's log messages, in order (npm's own lines left out). */
function messages (s: Started): string[] {
  return s.output().split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return []
    const { msg } = JSON.parse(line) as { msg?: unknown }
    return typeof msg === 'string' ? [msg] : []
  })
}

t.test('SIGTERM to npm alone stops the service: drained, the store closed, nothing left running', async (t) => {
  const s = await start(t)
  t.not(s.pid, s.npm.pid, 'the service logs its own process')
  process.kill(s.npm.pid as number, 'SIGTERM')
  t.equal(await s.exit, 0, 'npm exits with the service\'s code')
  t.notOk(alive(s.pid), 'the service\'s process has ended with npm')
  t.ok(messages(s).includes('shutting down: draining requests in flight'))
  t.equal(messages(s).at(-1), 'stopped: requests in flight answered, the store closed')
})

/**
 * A POST whose body arrives in two parts: once the service has accepted it (its log says so),
 * it waits for the rest while the stop begins. `finish` sends the rest.
 */
async function heldPost (s: Started): Promise<{ finish: () => void, answer: Promise<{ status: number, connection: string | undefined }> }> {
  const raw = Buffer.from(JSON.stringify({ name: 'in flight' }))
  const req = http.request(`http://127.0.0.1:${s.port}/v1/documents`, {
    method: 'POST',
    headers: { ...headers({ 'x-request-id': 'held-by-its-body' }), 'content-type': 'application/json', 'content-length': String(raw.length) }
  })
  const answer = new Promise<{ status: number, connection: string | undefined }>((resolve, reject) => {
    req.once('response', (res) => {
      res.resume()
      res.once('end', () => { resolve({ status: res.statusCode as number, connection: res.headers.connection }) })
    })
    req.once('error', reject)
  })
  req.write(raw.subarray(0, 4))
  await logged(s, /"reqId":"held-by-its-body"[^\n]*"incoming request"/)
  return { finish: () => { req.end(raw.subarray(4)) }, answer }
}

/**
 * One Ctrl-C: the terminal signals npm's process group, so the service gets SIGINT, and npm
 * forwards its own. Sent one after the other here, the service's first: at once, the two could
 * merge into one pending signal when the service is not scheduled between them.
 */
async function ctrlC (s: Started): Promise<void> {
  process.kill(s.pid, 'SIGINT')
  await logged(s, /shutting down: draining requests in flight/)
  process.kill(s.npm.pid as number, 'SIGINT')
  await logged(s, /this signal is taken for npm's copy/)
}

t.test('one Ctrl-C (the terminal\'s SIGINT and npm\'s copy of it) drains a request in flight and exits 0', async (t) => {
  const s = await start(t)
  const held = await heldPost(s)
  await ctrlC(s)
  held.finish()
  const { status, connection } = await held.answer
  t.equal(status, 400, 'answered (the document lacks its fields), not cut off')
  t.equal(connection, 'close')
  t.equal(await s.exit, 0)
  t.notOk(alive(s.pid))
  t.notMatch(s.output(), /exiting without waiting/)
  t.equal(messages(s).at(-1), 'stopped: requests in flight answered, the store closed')
})

t.test('a second Ctrl-C exits at once, without waiting for the request in flight', async (t) => {
  const s = await start(t)
  const held = await heldPost(s)
  await ctrlC(s)
  const cut = t.rejects(held.answer, 'the request is cut off')
  process.kill(s.pid, 'SIGINT')
  t.equal(await s.exit, 1, 'npm exits with the service\'s code')
  await cut
  t.notOk(alive(s.pid))
  t.match(s.output(), /SIGINT again while stopping: exiting without waiting for requests in flight/)
})
