import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { connect, createServer, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'

export const REDIS_SERVER = process.env.REDIS_SERVER ?? 'redis-server'

/** tap's `skip`: a reason when no redis-server can be run here. */
export const skipRedis: string | false = spawnSync(REDIS_SERVER, ['--version']).error === undefined
  ? false
  : `${REDIS_SERVER} is not installed: the Redis tests are skipped (install redis-server, or set REDIS_SERVER to its path)`

/** A port free on the loopback interface right now. */
export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** A throwaway redis-server on 127.0.0.1 (no persistence), stopped on teardown. Returns its URL. */
export async function startRedis (t: Test): Promise<string> {
  const port = await freePort()
  const child: ChildProcess = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  t.teardown(async () => {
    if (child.exitCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  })
  for (let i = 0; i < 100; i++) {
    if (await accepts(port)) return `redis://127.0.0.1:${port}`
    await sleep(50)
  }
  throw new Error(`redis-server did not start on port ${port}`)
}

async function accepts (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.end(); resolve(true) })
    socket.once('error', () => resolve(false))
  })
}

/**
 * A "Redis" that accepts connections and never answers (a hung server, a connection cut off
 * without a word): closed on teardown. Returns its URL.
 */
export async function silentRedis (t: Test): Promise<string> {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => server.close(resolve))
  })
  return `redis://127.0.0.1:${(server.address() as { port: number }).port}`
}

/** What `answer` settles to, or 'no answer' if it has not within `ms` (a hang fails the test, not the run). */
export async function answerOf<T> (answer: Promise<T>, ms = 10_000): Promise<T | 'no answer'> {
  return await Promise.race([answer, sleep(ms, 'no answer' as const, { ref: false })])
}
