// Shared pieces of the benchmarks: start a server in a child process, load it with
// autocannon from this process (so client and server sit on different cores), and
// read the server's CPU time and peak RSS over IPC.
import { fork } from 'node:child_process'
import autocannon from 'autocannon'

export function startServer (script, env = {}) {
  return new Promise((resolve, reject) => {
    const child = fork(script, [], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    const pending = new Map()
    let seq = 0
    child.on('message', (msg) => {
      if (msg.type === 'listening') {
        resolve({
          port: msg.port,
          child,
          stats: () => new Promise((resolve) => { const id = ++seq; pending.set(id, resolve); child.send({ type: 'stats', id }) }),
          stop: () => new Promise((resolve) => { child.once('exit', resolve); child.kill('SIGTERM') })
        })
      } else if (msg.type === 'stats') {
        pending.get(msg.id)?.(msg)
        pending.delete(msg.id)
      }
    })
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening`)))
  })
}

/** Call in a server child: reports the port, answers CPU/RSS questions. */
export function serveStats (port) {
  let peakRss = process.memoryUsage.rss()
  const timer = setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage.rss()) }, 100)
  timer.unref()
  process.on('message', (msg) => {
    if (msg.type === 'stats') {
      peakRss = Math.max(peakRss, process.memoryUsage.rss())
      const cpu = process.cpuUsage()
      process.send({ type: 'stats', id: msg.id, cpuMicros: cpu.user + cpu.system, peakRss })
    }
  })
  // A clean exit, so --cpu-prof and friends can write their output.
  process.once('SIGTERM', () => process.exit(0))
  // The benchmark died without stopping us: do not linger.
  process.once('disconnect', () => process.exit(0))
  process.send({ type: 'listening', port })
}

export async function load ({ url, connections = 50, duration = 10, headers = {}, method = 'GET', body, requests }) {
  const result = await autocannon({ url, connections, duration, headers, method, body, requests, pipelining: 1 })
  return {
    requests: result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts
  }
}

/** Runs `fn` against a server and adds its CPU microseconds per request and peak RSS. */
export async function measure (server, fn) {
  const before = await server.stats()
  const r = await fn()
  const after = await server.stats()
  return { ...r, cpuPerReqMicros: r.requests > 0 ? (after.cpuMicros - before.cpuMicros) / r.requests : NaN, peakRssMb: after.peakRss / 1048576 }
}

export function fmt (n, digits = 0) {
  return Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a'
}
