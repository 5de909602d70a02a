// Where issue 2's trivial-route target sits on this machine: bare Fastify against the same route
// with only the two headers the convention requires on its answer (servers/bare-headers.js), the
// floor (servers/floor.js: every rule of the route done by hand, in one hook, with none of the
// suite's code) and the suite (servers/suite.js). If the floor itself misses 0.90 of bare, no
// implementation of the route's rules through Fastify's hooks can meet the target here, however
// lean. Every server runs in BENCH_PROCESSES fresh process sets; within a set, BENCH_ROUNDS × 5
// rounds of BENCH_DURATION / 5 seconds each, every server once per round, in an order reversed
// every other round; each ratio is the median of its rounds' ratios against bare's.
import { startServer, load, measure, median, fmt, pinned } from './lib/harness.js'
import { PING_SECRET as SECRET, pingHeaders as headers } from './lib/ping.js'

const duration = Number(process.env.BENCH_DURATION ?? 10)
const rounds = Number(process.env.BENCH_ROUNDS ?? 2)
const processes = Number(process.env.BENCH_PROCESSES ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)

export const floorServers = [
  ['bare Fastify', 'bare.js'],
  ['bare + the two required headers', 'bare-headers.js'],
  ['the same, the headers set in one onRequest hook', 'bare-hook.js'],
  ['the floor: the route\'s rules by hand, one hook', 'floor.js'],
  ['full suite (conventions core)', 'suite.js']
]

export async function runFloor () {
  return await pinned(async () => {
    const results = floorServers.map(() => [])
    const total = rounds * 5
    const slice = Math.max(1, Math.round(duration / 5))
    const sets = Math.max(1, Math.min(processes, total))
    for (let p = 0; p < sets; p++) {
      const servers = []
      try {
        for (const [, script] of floorServers) servers.push(await startServer(new URL(`./servers/${script}`, import.meta.url).pathname, { BENCH_SECRET: SECRET }))
        for (const server of servers) await load({ url: `http://127.0.0.1:${server.port}/ping`, connections, duration: 2, headers }) // warm-up
        for (let i = Math.round(p * total / sets); i < Math.round((p + 1) * total / sets); i++) {
          const order = servers.map((_, s) => s)
          if (i % 2 === 1) order.reverse()
          for (const s of order) {
            const r = await measure(servers[s], () => load({ url: `http://127.0.0.1:${servers[s].port}/ping`, connections, duration: slice, headers }))
            if (r.non2xx > 0 || r.errors > 0) throw new Error(`${floorServers[s][1]}: ${r.non2xx} non-2xx and ${r.errors} errors`)
            results[s].push(r)
          }
          process.stderr.write(`  round ${i + 1} (set ${p + 1}): ${floorServers.map(([, script], s) => `${script} ${fmt(results[s][i].rps)} req/s ${fmt(results[s][i].cpuPerReqMicros, 1)} µs`).join(', ')}\n`)
        }
      } finally {
        for (const server of servers) await server.stop()
      }
    }
    const bare = results[0]
    return {
      rounds: total,
      slice,
      sets,
      rows: floorServers.map(([name, script], s) => {
        const ratios = results[s].map((r, i) => r.rps / bare[i].rps)
        const cpuRatios = results[s].map((r, i) => r.cpuPerReqMicros / bare[i].cpuPerReqMicros)
        return {
          name,
          script,
          rps: median(results[s].map((r) => r.rps)),
          cpu: median(results[s].map((r) => r.cpuPerReqMicros)),
          ratio: median(ratios),
          low: Math.min(...ratios),
          high: Math.max(...ratios),
          met: ratios.filter((x) => x >= 0.9).length,
          cpuRatio: median(cpuRatios)
        }
      })
    }
  })
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { rounds: total, slice, sets, rows } = await runFloor()
  console.log(`\ntrivial authenticated route, ${connections} connections, ${total} rounds of ${slice} s over ${sets} fresh process sets; medians of the rounds\n`)
  console.log('| server | req/s | CPU µs/req | throughput of bare | rounds at ≥ 0.90 | CPU of bare |')
  console.log('| --- | ---: | ---: | --- | ---: | ---: |')
  for (const r of rows) {
    const ratio = r.script === 'bare.js' ? '1 (baseline)' : `${fmt(r.ratio, 3)} (${fmt(r.low, 2)} to ${fmt(r.high, 2)})`
    const met = r.script === 'bare.js' ? '' : `${r.met} of ${total}`
    console.log(`| ${r.name} (\`servers/${r.script}\`) | ${fmt(r.rps)} | ${fmt(r.cpu, 1)} | ${ratio} | ${met} | ${fmt(r.cpuRatio, 2)} |`)
  }
}
