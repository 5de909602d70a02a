// Document content on the seeded database (run.js):
// - downloading a 5 MiB file, GET `/v1/documents/{id}/content`, against a bare Fastify route
//   that reads the same bytes from the same table (servers/pg-bare.js); both are checked to
//   answer the same bytes first;
// - ten concurrent 10 MiB uploads (PUT, each to a document of its own, with its If-Match) to a
//   fresh service process: how far its peak RSS rises over its RSS at rest. The peak is the
//   kernel's (VmHWM of /proc/<pid>/status, reset at rest through clear_refs), so no sampling
//   interval can miss it.
import { readFileSync, writeFileSync } from 'node:fs'
import pg from 'pg'
import { largeAnswers, median, pairedRounds, settings } from './lib/harness.js'
import { call, headers, startBare, startService } from './lib/service.js'

const MiB = 1024 * 1024
const DOWNLOAD_BYTES = 5 * MiB
const UPLOAD_BYTES = 10 * MiB
const UPLOADS = 10
const DOWNLOAD_CONNECTIONS = 4

/** A PDF-typed file of `size` bytes, varied so no layer can shortcut it. */
function fileOf (size, seed) {
  const bytes = Buffer.alloc(size)
  bytes.write('%PDF-1.7\n')
  for (let i = 9; i < size; i += 4096) bytes.writeUInt32LE((i * 2654435761 + seed) >>> 0, Math.min(i, size - 4))
  return bytes
}

async function upload (service, id, bytes) {
  const { etag } = await call(service, 'GET', `/v1/documents/${id}`)
  const res = await fetch(`${service.base}/v1/documents/${id}/content`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="bench.pdf"', 'if-match': etag },
    body: bytes
  })
  if (res.status !== 204) throw new Error(`PUT /v1/documents/${id}/content: ${res.status} ${(await res.text()).slice(0, 500)}`)
}

async function download (server, id) {
  const res = await fetch(`${server.base}/v1/documents/${id}/content`, { headers: { ...headers, accept: '*/*' } })
  if (res.status !== 200) throw new Error(`GET /v1/documents/${id}/content: ${res.status}`)
  return Buffer.from(await res.arrayBuffer())
}

/** A process's memory figure from /proc (kB → MiB). */
function procMiB (pid, key) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${key}:`))
  return Number(/(\d+)/.exec(line)[1]) / 1024
}

export async function runFiles ({ url, log }) {
  const db = new pg.Client({ connectionString: url })
  await db.connect()
  let ids
  try {
    ids = (await db.query(`SELECT id FROM documents WHERE ctx = 'prod' AND "deletedDateTime" IS NULL ORDER BY id LIMIT ${1 + UPLOADS * settings.rounds}`)).rows.map((r) => r.id)
  } finally {
    await db.end()
  }
  const [downloaded, ...uploaded] = ids

  // (a) Throughput of a 5 MiB download.
  const file = fileOf(DOWNLOAD_BYTES, 1)
  const service = await startService(url)
  const bare = await startBare(url)
  try {
    await upload(service, downloaded, file)
    for (const server of [service, bare]) {
      if (!(await download(server, downloaded)).equals(file)) throw new Error('GET content: the answer is not the bytes uploaded')
    }
  } finally {
    await service.stop()
    await bare.stop()
  }
  const path = `/v1/documents/${downloaded}/content`
  // A few connections: fifty 5 MiB answers at once outlast a short round before any completes.
  const get = { path, headers: { ...headers, accept: '*/*' }, connections: DOWNLOAD_CONNECTIONS, loader: largeAnswers }
  const rounds = await pairedRounds({
    start: async () => ({ service: await startService(url), bare: await startBare(url) }),
    cases: { 'download bare': { server: 'bare', ...get }, 'download service': { server: 'service', ...get } },
    log
  })

  // (b) Peak RSS of ten concurrent 10 MiB uploads, over the RSS at rest, in a fresh process per round.
  const bodies = Array.from({ length: UPLOADS }, (_, i) => fileOf(UPLOAD_BYTES, i + 2))
  const rises = []
  for (let round = 0; round < Math.max(1, Math.min(settings.rounds, 3)); round++) {
    const fresh = await startService(url)
    try {
      const targets = uploaded.slice(round * UPLOADS, (round + 1) * UPLOADS)
      // One upload first, so what a first request loads (code, a pool connection) is at rest too.
      await upload(fresh, targets[0], bodies[0])
      await new Promise((resolve) => setTimeout(resolve, 500))
      const pid = fresh.child.pid
      const rest = procMiB(pid, 'VmRSS')
      // 5: reset the peak to the current RSS (proc(5), clear_refs).
      writeFileSync(`/proc/${pid}/clear_refs`, '5')
      await Promise.all(targets.map((id, i) => upload(fresh, id, bodies[i])))
      const peak = procMiB(pid, 'VmHWM')
      rises.push({ rest, peak, rise: peak - rest })
      log(`  uploads round ${round + 1}: RSS at rest ${rest.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB, rise ${(peak - rest).toFixed(0)} MiB`)
    } finally {
      await fresh.stop()
    }
  }
  return { rounds, uploads: { rise: median(rises.map((r) => r.rise)), max: Math.max(...rises.map((r) => r.rise)), rest: median(rises.map((r) => r.rest)), peak: Math.max(...rises.map((r) => r.peak)), count: rises.length } }
}
