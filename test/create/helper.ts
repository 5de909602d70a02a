import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { request } from 'node:http'
import { promisify } from 'node:util'
import { toolEnv } from '../support/child-env.js'

export const run = promisify(execFile)
export const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

/**
 * The environment of a generated project's commands: as a tool's (toolEnv), so that the
 * project runs as it would in a terminal; npm takes packages from its cache first (warm after
 * `npm ci`).
 */
export function projectEnv (extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return toolEnv({ npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', ...extra })
}

export interface Answer { status: number, headers: Record<string, string | string[] | undefined>, body: string }

/** One HTTP request with exactly the headers given (fetch would add a User-Agent of its own). */
export async function call (port: number, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  return await new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const req = request({ host: '127.0.0.1', port, method, path, headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { text += chunk })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }) })
    })
    req.on('error', reject)
    req.end(payload)
  })
}

export interface Started {
  /** npm, leader of a process group of its own. */
  child: ChildProcess
  /** The service's own process, from its log. */
  pid: number
  port: number
  output: () => string
}

/** `npm start` in `dir`; resolves once the service logs where it listens. */
export async function start (dir: string, env: NodeJS.ProcessEnv): Promise<Started> {
  const child = spawn(npm, ['start'], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stderr?.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const [pid, port] = await new Promise<[number, number]>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      // pino's line: {"level":30,…,"pid":123,…,"msg":"Server listening at http://127.0.0.1:4567"}
      const m = /"pid":(\d+)[^\n]*listening at http:\/\/127\.0\.0\.1:(\d+)/i.exec(out)
      if (m !== null) resolve([Number(m[1]), Number(m[2])])
    })
    child.once('exit', (code) => { reject(new Error(`npm start exited with ${String(code)}:\n${out}`)) })
  })
  return { child, pid, port, output: () => out }
}

/**
 * SIGTERM to npm alone, as `docker stop` sends it to a container whose command is `npm start`;
 * resolves with npm's exit code, which is the service's, once npm has exited.
 */
export async function stop (server: Started): Promise<number | null> {
  if (server.child.exitCode !== null) return server.child.exitCode
  const exited = new Promise<number | null>((resolve) => { server.child.once('exit', (code) => { resolve(code) }) })
  process.kill(server.child.pid as number, 'SIGTERM')
  return await exited
}

/**
 * One Ctrl-C while a POST is in flight (its body sent in two parts): npm's copy of the SIGINT
 * first, and once the service says it is stopping, the terminal's, sent straight to it, so that
 * it is delivered before the rest of the body. A service that took the second signal for a
 * second Ctrl-C would exit 1, and one with no handler left for it would be ended by it, not exit
 * 0 once it has answered. Resolves with the POST's status and npm's exit code.
 */
export async function ctrlCWhileServing (server: Started, path: string, headers: Record<string, string>, body: unknown): Promise<{ status: number, code: number | null }> {
  const raw = Buffer.from(JSON.stringify(body))
  const req = request({ host: '127.0.0.1', port: server.port, method: 'POST', path, headers: { ...headers, 'x-request-id': 'held-by-its-body', 'content-type': 'application/json', 'content-length': String(raw.length) } })
  const answered = new Promise<number>((resolve, reject) => {
    req.once('response', (res) => {
      res.resume()
      res.once('end', () => { resolve(res.statusCode ?? 0) })
    })
    req.once('error', reject)
  })
  const exited = new Promise<number | null>((resolve) => { server.child.once('close', (code) => { resolve(code) }) })
  req.write(raw.subarray(0, 2))
  await logLine(server, /"reqId":"held-by-its-body"[^\n]*"incoming request"/)
  process.kill(server.child.pid as number, 'SIGINT')
  await logLine(server, /"msg":"stopping"/)
  process.kill(server.pid, 'SIGINT')
  req.end(raw.subarray(2))
  return { status: await answered, code: await exited }
}

/** Resolves once the service's output has a line matching `re`; throws once it has ended without one. */
async function logLine (server: Started, re: RegExp): Promise<void> {
  const stdout = server.child.stdout
  while (!re.test(server.output())) {
    if (stdout === null || stdout.readableEnded) throw new Error(`npm start ended before logging ${String(re)}:\n${server.output()}`)
    await new Promise<void>((resolve) => {
      const next = (): void => {
        stdout.off('data', next).off('end', next)
        resolve()
      }
      stdout.on('data', next).on('end', next)
    })
  }
}

/** Whatever is left of `npm start` after a failed test: the whole group. */
export function kill (server: Started): void {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return
  try {
    process.kill(-(server.child.pid as number), 'SIGKILL')
  } catch {}
}

export { alive } from '../support/processes.js'
