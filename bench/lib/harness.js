// What every case shares: its settings, servers started in child processes (reporting their
// CPU time and peak RSS over IPC), load from autocannon in this process, and the paired rounds.
import { execFileSync, spawn } from 'node:child_process'
import http from 'node:http'
import os from 'node:os'
import autocannon from 'autocannon'

const setting = (name, fallback) => Number(process.env[name] ?? fallback)

export const settings = {
  /** Paired rounds per case: every case of a group runs once per round. */
  rounds: setting('BENCH_ROUNDS', 10),
  /** Seconds of load per case and round. */
  duration: setting('BENCH_DURATION', 2),
  /** Fresh sets of server processes the rounds are spread over. */
  processes: setting('BENCH_PROCESSES', 5),
  /** Seconds of load per case on each fresh set of processes before its rounds. */
  warmup: setting('BENCH_WARMUP', 2),
  connections: setting('BENCH_CONNECTIONS', 50)
}

/*
 * For the trivial route (no database), client and server on different cores, fixed: servers
 * on the last CPU, the load generator on the others. Left to the scheduler, both wander over
 * the cores and two identical servers differ by up to 10 % in CPU per request. Cases with
 * PostgreSQL are not pinned: its backends would crowd whichever core the pinning leaves.
 * BENCH_PIN=0, a single CPU or no `taskset` leaves all placement to the scheduler.
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

/**
 * The warnings the server processes emitted (Node's `process.on('warning')`), each with the
 * script that emitted it, in order: a run that leaves any but an ExperimentalWarning fails. A
 * leak warning under load went unseen in the servers' stderr while every figure looked right.
 */
export const serverWarnings = []

/** `serverWarnings`, each told once with how many times it came; `failing`: those a run fails for. */
export function serverWarningLines () {
  const counts = new Map()
  for (const w of serverWarnings) {
    const key = `${w.script}: ${w.name}: ${w.message}`
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  const lines = [...counts].map(([w, n]) => `${w}${n > 1 ? ` (${n} times)` : ''}`)
  return { lines, failing: lines.filter((l) => !l.includes(': ExperimentalWarning: ')) }
}

/** Starts `script` (a file of bench/servers/) in a child process; resolves once it listens. */
export function startServer (script, env = {}) {
  const file = new URL(`../servers/${script}`, import.meta.url).pathname
  return new Promise((resolve, reject) => {
    // As fork() would: this process's Node flags (a TypeScript loader, say) go to the child too.
    const command = [...(pinnedNow ? ['taskset', '-c', pinning.server] : []), process.execPath, ...process.execArgv, file]
    const child = spawn(command[0], command.slice(1), { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    const pending = new Map()
    let seq = 0
    child.on('message', (msg) => {
      if (msg.type === 'listening') {
        resolve({
          port: msg.port,
          base: `http://127.0.0.1:${msg.port}`,
          child,
          stats: () => new Promise((resolve) => { const id = ++seq; pending.set(id, resolve); child.send({ type: 'stats', id }) }),
          stop: () => new Promise((resolve) => { child.once('exit', resolve); child.kill('SIGTERM') })
        })
      } else if (msg.type === 'warning') {
        serverWarnings.push({ script, name: msg.name, message: msg.message })
      } else if (msg.type === 'stats') {
        pending.get(msg.id)?.(msg)
        pending.delete(msg.id)
      }
    })
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening`)))
  })
}

/**
 * Call in a server child: reports the port, answers CPU/RSS questions. `close`, when given, runs
 * on SIGTERM before the exit: a server with work in the background (the service's outgoing
 * events) ends it as in production, so the next case does not wait for what it left held.
 */
export function serveStats (port, close = async () => {}) {
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
  process.on('warning', (w) => { if (process.connected) process.send({ type: 'warning', name: w.name, message: w.message }) })
  process.once('SIGTERM', () => { close().finally(() => process.exit(0)) })
  // The benchmark died without stopping us: do not linger.
  process.once('disconnect', () => process.exit(0))
  process.send({ type: 'listening', port })
}

/** Loads `server` for `duration` seconds (`connections`: default BENCH_CONNECTIONS); adds the requests made, the server's CPU µs per request and peak RSS. Throws on any error or non-2xx. */
export async function load (server, { path = '/', method = 'GET', headers = {}, body, requests, duration = settings.duration, connections = settings.connections }) {
  const before = await server.stats()
  const result = await autocannon({ url: server.base + path, connections, duration, headers, method, body, requests, pipelining: 1 })
  const after = await server.stats()
  const errors = result.errors + result.timeouts
  if (result.non2xx > 0 || errors > 0) throw new Error(`${method} ${path}: ${result.non2xx} non-2xx answers and ${errors} errors`)
  const count = result.requests.total
  return {
    count,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpu: count > 0 ? (after.cpuMicros - before.cpuMicros) / count : NaN,
    rss: after.peakRss / 1048576
  }
}

/**
 * `load`'s figures for large answers: autocannon's own HTTP parser spends more CPU on a body of
 * megabytes than the servers do, so here Node's client (llhttp, keep-alive) reads them on
 * `connections` connections, each asking again as soon as its answer is in.
 */
export async function largeAnswers (server, { path, headers: sent, duration = settings.duration, connections }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const latencies = []
  const one = () => new Promise((resolve, reject) => {
    const start = process.hrtime.bigint()
    http.get(server.base + path, { agent, headers: sent }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`GET ${path}: ${res.statusCode}`))
      res.on('data', () => {})
      res.on('end', () => { latencies.push(Number(process.hrtime.bigint() - start) / 1e6); resolve() })
      res.on('error', reject)
    }).on('error', reject)
  })
  const before = await server.stats()
  const started = Date.now()
  const end = started + duration * 1000
  await Promise.all(Array.from({ length: connections }, async () => { while (Date.now() < end) await one() }))
  const seconds = (Date.now() - started) / 1000
  const after = await server.stats()
  agent.destroy()
  const sorted = latencies.sort((a, b) => a - b)
  return {
    rps: sorted.length / seconds,
    p50: median(sorted),
    p99: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))],
    cpu: (after.cpuMicros - before.cpuMicros) / sorted.length,
    rss: after.peakRss / 1048576
  }
}

/**
 * The method of every throughput case. Identical server processes differ by several percent
 * on a small machine, and its noise comes in bursts; so each case is loaded in short rounds,
 * every case of the group once per round in an order reversed every other round, and a ratio
 * is the median of the rounds' ratios: a burst moves one round, not the verdict. The rounds
 * are spread over fresh sets of server processes (each set warmed up first), as how V8
 * compiles one process's hot paths moves its CPU per request and one set would carry that
 * luck into every round.
 *
 * `start()` starts one set of servers and returns them by name; `cases` maps a case's name to
 * `{ server, loader?, ...load options }`. Returns every case's rounds.
 */
export async function pairedRounds ({ start, cases, log = () => {} }) {
  const names = Object.keys(cases)
  const results = Object.fromEntries(names.map((name) => [name, []]))
  const sets = Math.max(1, Math.min(settings.processes, settings.rounds))
  for (let set = 0; set < sets; set++) {
    const servers = await start()
    try {
      // A case may bring its own `loader` (same options, same figures) where autocannon does not fit.
      const run = (name, duration) => (cases[name].loader ?? load)(servers[cases[name].server], { ...cases[name], duration })
      if (settings.warmup > 0) for (const name of names) await run(name, settings.warmup)
      // This set's share of the rounds; the order alternates over the whole run.
      for (let round = Math.round(set * settings.rounds / sets); round < Math.round((set + 1) * settings.rounds / sets); round++) {
        const order = round % 2 === 0 ? names : [...names].reverse()
        for (const name of order) results[name].push(await run(name))
        log(`  round ${round + 1} (processes ${set + 1}): ${names.map((name) => `${name} ${fmt(results[name][round].rps)}`).join(', ')} req/s`)
      }
    } finally {
      for (const server of Object.values(servers)) await server.stop()
    }
  }
  return results
}

/** Each round's throughput ratio of case `of` to case `to`. */
export function ratios (results, of, to) {
  return results[of].map((r, i) => r.rps / results[to][i].rps)
}

/** A case's figures over its rounds: medians, and the server's peak RSS. */
export function summary (rounds) {
  const of = (key) => median(rounds.map((r) => r[key]))
  return { rps: of('rps'), p50: of('p50'), p99: of('p99'), cpu: of('cpu'), rss: Math.max(...rounds.map((r) => r.rss)) }
}

/** The median of `xs` (the mean of the middle two for an even count). */
export function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

export function fmt (n, digits = 0) {
  return Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a'
}
