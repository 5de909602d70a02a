import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { connect, createServer } from 'node:net'
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
