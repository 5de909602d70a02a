import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'

// bench/soak.js is plain JavaScript without types: a computed specifier keeps it `any`.
process.env.SOAK_FROM_SOURCE = '1'
const soak = await import(new URL('../../bench/soak.js', import.meta.url).href)

const root = fileURLToPath(new URL('../../', import.meta.url))
// The TypeScript loader the tests run under: the soak and its service child run the sources, no build needed.
const loader = fileURLToPath(new URL('../../scripts/strip-types.js', import.meta.url))

/** A workload's bookkeeping as createWorkload keeps it: key → [kind, sent, ok, refused]. */
function workload (writes: Array<[string, string, number, number, number]>, bulks: string[][] = []): Record<string, unknown> {
  return { writes: new Map(writes.map(([key, kind, sent, ok, refused]) => [key, { kind, sent, ok, refused }])), bulks }
}

t.test('the audit holds every write to what the client was told', async (t) => {
  const cases: Array<{ name: string, writes: Array<[string, string, number, number, number]>, effects: Array<[string, string, number]>, check: (t: Test, r: any) => void }> = [
    { name: 'acknowledged and applied once', writes: [['a', 'create', 1, 1, 0]], effects: [['insert', 'a', 1]], check: (t, r) => { t.equal(r.kinds.create.acked, 1); t.strictSame(r.kinds.create.lost, []) } },
    { name: 'acknowledged, never applied: lost', writes: [['a', 'create', 1, 1, 0]], effects: [], check: (t, r) => t.strictSame(r.kinds.create.lost, ['a']) },
    { name: 'applied twice: duplicated', writes: [['m', 'webhook', 2, 2, 0]], effects: [['webhook', 'm', 2]], check: (t, r) => t.strictSame(r.kinds.webhook.duplicated, ['m ×2']) },
    { name: 'refused but applied', writes: [['p', 'patch', 1, 0, 1]], effects: [['patch', 'p', 1]], check: (t, r) => t.strictSame(r.kinds.patch.refusedApplied, ['p']) },
    { name: 'unanswered, applied: allowed, counted apart', writes: [['p', 'patch', 1, 0, 0]], effects: [['patch', 'p', 1]], check: (t, r) => { t.equal(r.kinds.patch.unanswered, 1); t.equal(r.kinds.patch.unansweredApplied, 1); t.strictSame(r.kinds.patch.refusedApplied, []) } },
    { name: 'never sent: unknown', writes: [], effects: [['insert', 'ghost', 1]], check: (t, r) => t.strictSame(r.unknown, ['insert ghost ×1']) },
    { name: 'a bulk name counted as a create: unknown', writes: [['soakbulk-1', 'create', 1, 1, 0]], effects: [['insert', 'soakbulk-1', 1]], check: (t, r) => t.equal(r.unknown.length, 1) }
  ]
  for (const c of cases) {
    const r = soak.audit(workload(c.writes), c.effects.map(([kind, key, n]) => ({ kind, key, n })))
    t.test(c.name, async (t) => { c.check(t, r) })
  }
  const bulk = workload([['soakbulk-1', 'bulk', 1, 0, 0], ['soakbulk-2', 'bulk', 1, 0, 0]], [['soakbulk-1', 'soakbulk-2']])
  t.equal(soak.audit(bulk, [{ kind: 'insert', key: 'soakbulk-1', n: 1 }]).partialBulks, 1, 'an ATOMIC bulk applied in part')
  t.equal(soak.audit(bulk, []).partialBulks, 0, 'an unanswered ATOMIC bulk not applied at all')
})

t.test('memory levels off, or it does not', async (t) => {
  const flat = Array.from({ length: 60 }, (_, i) => 150 + (i < 10 ? i : 10) + (i % 2))
  const growing = Array.from({ length: 60 }, (_, i) => 150 + i * 3)
  t.ok(soak.memoryVerdict(flat, 60).ok, 'flat after a warm-up')
  t.equal(soak.memoryVerdict(flat, 60).window, 20)
  const g = soak.memoryVerdict(growing, 60)
  t.notOk(g.ok, '3 MB/s is unbounded growth')
  t.ok(Math.abs(g.slope - 180) < 1e-9, 'slope in MB per minute')
  t.ok(soak.memoryVerdict(growing.slice(0, 8), 8).ok, 'a short run is not judged')
  t.notOk(soak.memoryVerdict(growing.slice(0, 8), 8).judged)
})

const postgres = await import(new URL('../../scripts/postgres.js', import.meta.url).href)
const server = process.env.TEST_DATABASE_URL ?? ''
const skip = server === '' && postgres.havePostgres?.() === false ? 'no PostgreSQL server: set TEST_DATABASE_URL or install the server binaries' : false

t.test('a short soak against the sources passes its audit', { skip }, async (t) => {
  const env: NodeJS.ProcessEnv = { ...process.env, SOAK_FROM_SOURCE: '1', SOAK_DURATION: '8', SOAK_CONNECTIONS: '20', SOAK_DOCUMENTS: '2000', SOAK_WRITE: '0', TS_NODE_TRANSPILE_ONLY: '1', NODE_OPTIONS: '' }
  // The server of `npm test` when there is one (a database of the soak's own on it); else the soak starts one.
  if (server !== '') env.SOAK_DATABASE_URL = server
  const child = spawn(process.execPath, ['--import', loader, 'bench/soak.js'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk) => { out += chunk })
  child.stderr.on('data', (chunk) => { err += chunk })
  const code = await new Promise((resolve) => child.once('exit', resolve))
  t.equal(code, 0, `exit code (stderr: ${err.slice(-2000)})`)
  t.match(out, '**PASSED**')
  // Every operation of the mix was exercised, none answered 5xx.
  for (const op of ['get', 'page', 'create', 'patch', 'bulk ATOMIC', 'webhook']) {
    const row = out.split('\n').find((line) => line.startsWith(`| ${op}`))
    const cells = row?.split('|').map((c) => c.trim().replaceAll(',', '')) ?? []
    t.ok(Number(cells[3]) > 0, `${op}: some 2xx`)
    t.equal(cells[5], '0', `${op}: no 5xx`)
  }
})
