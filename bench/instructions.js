// Issue 2's trivial route counted in machine instructions instead of seconds: each server runs
// under valgrind's callgrind, is warmed up with INSTR_WARMUP requests, and the instructions its
// main thread executes over the next INSTR_REQUESTS requests are divided by their number. Unlike
// CPU time, the count does not move with what else the machine is doing, so small differences
// between servers are seen exactly. It still moves with how V8 happens to compile a process: a
// process now and then settles into a state where some object literals in Node's stream code go
// through the runtime (tens of thousands of extra instructions per request, bare Fastify included),
// so each server runs in INSTR_PROCESSES fresh processes and the lowest count is the figure.
// Five servers decompose the suite's cost: bare Fastify; bare + the two headers every answer of
// the suite's route carries; the floor, every rule of the route done by hand in one hook
// (servers/floor.js); the suite's shape without its checks (servers/shape.js); the suite.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { fmt, startServer } from './lib/harness.js'
import { PING_SECRET as SECRET, pingHeaders as headers } from './lib/ping.js'

const WARMUP = Number(process.env.INSTR_WARMUP ?? 40_000)
const REQUESTS = Number(process.env.INSTR_REQUESTS ?? 10_000)
const PROCESSES = Number(process.env.INSTR_PROCESSES ?? 3)

const servers = [
  ['bare Fastify', 'bare.js'],
  ['bare + the two headers', 'bare-headers.js'],
  ['the floor: the route\'s rules by hand, one hook', 'floor.js'],
  ['the suite\'s shape, no checks', 'shape.js'],
  ['full suite (conventions core)', 'suite.js']
]

function hasCallgrind () {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' })
    execFileSync('callgrind_control', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Main-thread instructions per request of one fresh process of `script`. */
async function count (script) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-instr-'))
  const out = join(dir, 'callgrind.out')
  const wrapper = [
    'valgrind', '--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes',
    // V8 writes and rewrites machine code in its heap: valgrind must notice code changes there.
    '--smc-check=all-non-file', `--callgrind-out-file=${out}`, '--log-file=/dev/null'
  ]
  const server = await startServer(new URL(`./servers/${script}`, import.meta.url).pathname, { BENCH_SECRET: SECRET }, { wrapper })
  try {
    const run = async (amount) => {
      const r = await autocannon({ url: `http://127.0.0.1:${server.port}/ping`, connections: 4, amount, headers })
      if (r.non2xx > 0 || r.errors > 0 || r.requests.total < amount) throw new Error(`${script}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.requests.total} of ${amount} requests`)
    }
    // valgrind runs the server in its own process: the child's pid is the one to control.
    const control = (...args) => execFileSync('callgrind_control', [...args, String(server.child.pid)], { stdio: 'ignore' })
    await run(WARMUP)
    control('-i', 'on')
    await run(REQUESTS)
    control('-i', 'off')
    control('-d')
    // Thread 1 of dump 1: the event loop, where requests are served (V8's compiler and GC helper
    // threads are the other files).
    const totals = readFileSync(`${out}.1-01`, 'utf8').match(/^totals: (\d+)$/m)
    if (totals === null) throw new Error(`${script}: no totals in callgrind's dump`)
    return Number(totals[1]) / REQUESTS
  } finally {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

async function runInstructions () {
  const rows = []
  for (const [name, script] of servers) {
    const counts = []
    for (let p = 0; p < PROCESSES; p++) {
      counts.push(await count(script))
      process.stderr.write(`  ${name}, process ${p + 1}: ${fmt(counts[p])} instructions per request\n`)
    }
    rows.push({ name, script, counts, min: Math.min(...counts) })
  }
  return rows
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!hasCallgrind()) {
    console.error('bench/instructions.js needs valgrind with callgrind (Debian: apt-get install valgrind)')
    process.exit(1)
  }
  const rows = await runInstructions()
  const bare = rows[0].min
  console.log(`\ntrivial route, main-thread instructions per request under callgrind: ${fmt(WARMUP)} requests of warm-up, ${fmt(REQUESTS)} counted, lowest of ${PROCESSES} processes; 4 connections\n`)
  console.log('| server | instructions / request | of bare | each process |')
  console.log('| --- | ---: | ---: | --- |')
  for (const r of rows) console.log(`| ${r.name} (\`servers/${r.script}\`) | ${fmt(r.min)} | ${fmt(r.min / bare, 3)} | ${r.counts.map((c) => fmt(c)).join(', ')} |`)
}
