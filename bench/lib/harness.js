// Shared pieces of the benchmarks: start a server in a child process, load it with
// autocannon from this process, and read the server's CPU time and peak RSS over IPC.
import { execFileSync, spawn } from 'node:child_process'
import os from 'node:os'
import autocannon from 'autocannon'

/*
 * For the trivial route (no database), client and server on different cores, fixed: the server
 * on the last CPU, the load generator on the others. Left to the scheduler, both wandered over
 * the two cores and two identical servers differed by up to 10 % in CPU per request. Cases with
 * PostgreSQL are not pinned: its backends then crowd whichever core the pinning leaves, which
 * distorts the comparison more than it steadies it. BENCH_PIN=0, a single CPU or no `taskset`
 * leaves all placement to the scheduler.
 */
const cpus = os.availableParallelism()
export const pinning = process.env.BENCH_PIN === '0' || cpus < 2 || !hasTaskset()
  ? null
  : { server: String(cpus - 1), client: cpus === 2 ? '0' : `0-${cpus - 2}` }

// True inside pinned(): servers started then go on the server CPU.
let pinnedNow = false

function hasTaskset () {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Runs `fn` with this process (the load generator) on the client CPUs and the servers it starts on the server CPU. */
export async function pinned (fn) {
  if (pinning === null) return await fn()
  execFileSync('taskset', ['-a', '-p', '-c', pinning.client, String(process.pid)], { stdio: 'ignore' })
  pinnedNow = true
  try {
    return await fn()
  } finally {
    pinnedNow = false
    execFileSync('taskset', ['-a', '-p', '-c', `0-${cpus - 1}`, String(process.pid)], { stdio: 'ignore' })
  }
}

/** `wrapper`: a command (and its arguments) the server's `node` runs under, e.g. valgrind. */
export function startServer (script, env = {}, { wrapper = [] } = {}) {
  return new Promise((resolve, reject) => {
    const options = { env: { ...process.env, ...env }, stdio: ['ignore', wrapper.length > 0 ? 'ignore' : 'inherit', 'inherit', 'ipc'] }
    // As fork() would: this process's Node flags (a TypeScript loader, say) go to the child too.
    const command = [...(pinnedNow ? ['taskset', '-c', pinning.server] : []), ...wrapper, process.execPath, ...process.execArgv, script]
    const child = spawn(command[0], command.slice(1), options)
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

export async function load ({ url, connections = 50, duration = 10, headers = {}, method = 'GET', body, requests, rate }) {
  // `rate`: requests per second over all connections (autocannon's overallRate); unset, as fast as served.
  const result = await autocannon({ url, connections, duration, headers, method, body, requests, overallRate: rate, pipelining: 1 })
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

/** The median of `xs` (the mean of the middle two for an even count). */
export function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

export function fmt (n, digits = 0) {
  return Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a'
}
